// imhost web: the browser's side of a chat page. The server draws every page (escaped, in
// PageHTML.swift) and keeps it live over one event stream; this script only puts what comes in
// its place, keeps the reader where they were, and posts what is clicked or typed as the act
// the element names (data-do and its data: WebAction.swift), as JSON.
"use strict";

// The script's own words in the page's language (the document's lang, which the server chose:
// imhost web --lang, or the browser's Accept-Language). {0}, {1} stand for what is put in.
const chinese = {
  "Dismiss": "关闭", "Replying to {0}: {1}": "回复 {0}：{1}", "Cancel reply": "取消回复", "yourself": "自己", "Voice ": "语音 ", "Photo": "照片",
  "Reactions": "回应", "New message from {0}": "{0} 发来新消息", "Send voice {0}": "发送语音 {0}", "Voice": "语音",
  "Not sent: this browser cannot record sound.": "未发送：这个浏览器不能录音。",
  "Not sent: this browser cannot record Opus sound.": "未发送：这个浏览器不能录制 Opus 声音。",
  "Not sent: this page may not use the microphone. Allow it in the browser's settings for this site, then try again.": "未发送：这个页面不能使用麦克风。请在浏览器的网站设置中允许，然后重试。",
  "Not sent: no microphone could be opened.": "未发送：无法打开麦克风。",
  "Clear this chat?": "清空这个聊天？", "Clear chat": "清空聊天", "Every message of this chat leaves this device. Your other devices keep theirs.": "这个聊天的所有消息都会从这台设备上删除。你的其他设备保留各自的消息。",
  "Report this person?": "举报这个人？", "Report": "举报", "The app's team gets a report of this person with their last 5 messages in this chat. They are not told.": "应用团队会收到对这个人的举报，附上对方在这个聊天中的最后 5 条消息。对方不会被告知。",
  "Cancel": "取消", "{0} new messages.": "{0} 条新消息。", "Reconnecting…": "正在重新连接…", "{0} is typing…": "{0} 正在输入…", "online": "在线", "last seen {0}": "最后在线 {0}",
  "Not sent: this browser cannot say where you are.": "未发送：这个浏览器无法给出你的位置。",
  "Not sent: this page may not know your location. Allow it in the browser's settings for this site, then try again.": "未发送：这个页面不能获取你的位置。请在浏览器的网站设置中允许，然后重试。",
  "Not sent: your location could not be found. Try again in a moment.": "未发送：找不到你的位置。请稍后重试。",
  "Not sent: the message is too long ({0} KB; at most {1} KB). Shorten it, or send it in parts.": "未发送：消息太长（{0} KB；最多 {1} KB）。请缩短，或分几条发送。",
};
function t(english, ...values) {
  let said = document.documentElement.lang.startsWith("zh") ? (chinese[english] || english) : english;
  // In one pass: a value that holds "{1}" is not filled in again.
  return said.replace(/\{(\d+)\}/g, (whole, index) => (Number(index) < values.length ? String(values[Number(index)]) : whole));
}

function post(page, act) {
  return fetch("/page/" + encodeURIComponent(page), { method: "POST", body: JSON.stringify(act), credentials: "same-origin",
                                                      headers: { "Content-Type": "application/json" } })
    .then((reply) => { if (!reply.ok) return reply.text().then((why) => said(why.trim(), true)); });
}

// The act an element names: what to do, and the numbers and button id it carries.
function actOf(element) {
  const act = { do: element.dataset.do };
  for (const key of ["message", "item", "count"]) {
    if (element.dataset[key] !== undefined) act[key] = Number(element.dataset[key]);
  }
  if (element.dataset.button !== undefined) act.button = element.dataset.button;
  if (element.dataset.emoji !== undefined) act.emoji = element.dataset.emoji;
  return act;
}

// A card's answers, as the host takes them: each input's value by its name, several for boxes.
function cardValues(form) {
  const values = {};
  for (const field of form.querySelectorAll("input[name]")) {
    if (field.type === "checkbox") {
      if (!values[field.name]) values[field.name] = [];
      if (field.checked) values[field.name].push(field.value);
    } else if (field.type === "radio") {
      if (!values[field.name]) values[field.name] = [];
      if (field.checked) values[field.name] = field.value;
    } else {
      // An emptied input is sent empty: the host does not fill it with what the card showed.
      values[field.name] = field.value;
    }
  }
  return values;
}

// What was typed and chosen in each card's inputs, and the host's words beside them.
function cardState(within) {
  return Array.from(within.querySelectorAll("form.card-form"), (form) => ({
    message: form.dataset.message, revision: form.dataset.revision,
    fields: Array.from(form.querySelectorAll("input[name]"), (field) => ({ name: field.name, type: field.type, value: field.value, checked: field.checked })),
    errors: Array.from(form.querySelectorAll(".input-error:not([hidden])"), (error) => ({ id: error.id, text: error.textContent })),
  }));
}

// ...outlives a new drawing of the message, while the card asks the same (a revised card
// starts afresh).
function restoreCards(within, state) {
  for (const kept of state) {
    const form = within.querySelector("form.card-form[data-message=\"" + kept.message + "\"]");
    if (!form || form.dataset.revision !== kept.revision) continue;
    const fields = Array.from(form.querySelectorAll("input[name]"));
    for (const field of kept.fields) {
      const choice = field.type === "checkbox" || field.type === "radio";
      const twin = fields.find((other) => other.name === field.name && other.type === field.type && (!choice || other.value === field.value));
      if (!twin) continue;
      if (choice) twin.checked = field.checked; else twin.value = field.value;
    }
    for (const error of kept.errors) {
      const twin = form.querySelector("#" + CSS.escape(error.id));
      if (twin) { twin.textContent = error.text; twin.hidden = false; }
    }
  }
}

// The host refused some of a card's answers: each is said beside its input, which is marked
// invalid; the first takes the focus. Those that passed lose their mark.
function showInputErrors(inputs) {
  const form = document.querySelector("form.card-form[data-message=\"" + inputs.message + "\"]");
  if (!form) return;
  for (const error of form.querySelectorAll(".input-error")) { error.hidden = true; error.textContent = ""; }
  for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
  let first = null;
  for (const { input, text } of inputs.errors) {
    const error = document.getElementById("in-" + inputs.message + "-" + input + "-error");
    if (!error) continue;
    error.textContent = text;
    error.hidden = false;
    const holder = error.closest(".card-input");
    const field = holder && holder.querySelector("input");
    // A choice's options each say it (a group of them has no such state).
    if (holder) for (const input of holder.querySelectorAll("input")) input.setAttribute("aria-invalid", "true");
    if (!first && field) first = field;
  }
  if (first) first.focus();
}

// A notice: {text, dev, alert}. The person's words, or, in the developer's view, the
// developer's; none when there are no words for the view. Three at most are shown, each its own
// role=status (role=alert) element, gone after a few seconds unless hovered or focused; every
// one stays in the list the Notices button opens.
function notify(notice) {
  const text = devView() ? (notice.dev || notice.text) : notice.text;
  if (!text) return;
  const log = document.getElementById("notice-log");
  if (log) {
    const item = document.createElement("li");
    item.textContent = text;
    if (notice.alert) item.className = "alert";
    const when = document.createElement("time");
    when.textContent = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    item.prepend(when, " ");
    log.append(item);
    const open = document.querySelector("button.notices-open");
    if (open) { open.hidden = false; open.querySelector(".count").textContent = "(" + log.children.length + ")"; }
  }
  const shown = document.getElementById("notices");
  if (!shown) return;
  const box = document.createElement("div");
  box.className = "notice" + (notice.alert ? " alert" : "");
  box.setAttribute("role", notice.alert ? "alert" : "status");
  box.tabIndex = 0;
  box.textContent = text;
  const dismiss = document.createElement("button");
  dismiss.type = "button";
  dismiss.className = "dismiss";
  dismiss.setAttribute("aria-label", t("Dismiss"));
  dismiss.textContent = "×";
  dismiss.addEventListener("click", () => box.remove());
  box.append(dismiss);
  // The chat's list gives the notices their room: a reader at its end stays there.
  const list = document.querySelector(".messages");
  const atEnd = list && list.scrollHeight - list.scrollTop - list.clientHeight < 8;
  shown.append(box);
  while (shown.children.length > 3) shown.firstElementChild.remove();
  if (atEnd) list.scrollTop = list.scrollHeight;
  let left = notice.alert ? 8000 : 5000, since = 0, timer = 0;
  const run = () => { since = Date.now(); timer = setTimeout(() => box.remove(), left); };
  const hold = () => { if (timer) { clearTimeout(timer); timer = 0; left = Math.max(1000, left - (Date.now() - since)); } };
  box.addEventListener("mouseenter", hold);
  box.addEventListener("focusin", hold);
  box.addEventListener("mouseleave", () => { if (!timer && !box.contains(document.activeElement)) run(); });
  box.addEventListener("focusout", () => { if (!timer && !box.matches(":hover")) run(); });
  run();
}

// A reply being written: the message it answers ({number, who, text}), shown above the input
// until it is sent or cancelled (×, or Escape in the input). It outlives a new drawing of the page.
let replying = null;
function showReplying(root) {
  const form = root.querySelector("form[data-send]");
  if (!form) return;
  let bar = form.querySelector(".replying");
  if (!replying) { if (bar) bar.remove(); return; }
  if (!bar) {
    bar = document.createElement("div");
    bar.className = "replying";
    bar.setAttribute("role", "status");
    form.prepend(bar);
  }
  const what = document.createElement("span");
  what.textContent = t("Replying to {0}: {1}", replying.who, replying.text);
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.className = "cancel-reply";
  cancel.setAttribute("aria-label", t("Cancel reply"));
  cancel.textContent = "×";
  cancel.addEventListener("click", () => { replying = null; showReplying(root); });
  bar.replaceChildren(what, cancel);
}

// What a message says of itself, for the reply bar: its sender and its first words.
function replyTarget(message) {
  const who = message.classList.contains("sent") ? t("yourself") : (message.querySelector(".meta .who") || {}).textContent || "";
  const body = message.querySelector(".bubble");
  const played = body && body.querySelector("audio") ? t("Voice ") : "";
  const words = body ? played + (body.querySelector(".card-title") || body).textContent.replace(/\s+/g, " ").trim() : "";
  const text = words || (message.querySelector("img.photo-image") ? t("Photo") : "");
  return { number: Number(message.dataset.number), who, text: text.length > 80 ? text.slice(0, 79) + "…" : text };
}

// The short set of reactions, drawn once under the message whose React was pressed: the one
// given there is pressed, and pressing it again takes it back. Escape closes it.
const reactionSet = ["👍", "❤️", "😂", "😮", "😢", "🙏"];
function chooseReaction(message) {
  const open = document.querySelector(".react-choices");
  const opener = message.querySelector("button.react");
  if (open) {
    const was = open.closest(".message");
    open.remove();
    for (const button of document.querySelectorAll("button.react[aria-expanded=true]")) button.setAttribute("aria-expanded", "false");
    if (was === message) return;
  }
  const mine = message.querySelector("ul.reactions li[data-mine]");
  const given = mine ? mine.firstChild.textContent.trim() : "";
  const choices = document.createElement("div");
  choices.className = "react-choices";
  choices.setAttribute("role", "group");
  choices.setAttribute("aria-label", t("Reactions"));
  for (const emoji of reactionSet) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.do = "react";
    button.dataset.message = message.dataset.number;
    button.dataset.emoji = emoji === given ? "" : emoji;
    button.setAttribute("aria-pressed", String(emoji === given));
    button.textContent = emoji;
    choices.append(button);
  }
  message.querySelector(".actions").after(choices);
  if (opener) opener.setAttribute("aria-expanded", "true");
  choices.querySelector("button").focus();
}

// Recall buttons go when their time is up (the server says until when, in the button).
function expireRecalls(root) {
  const now = Date.now();
  for (const button of root.querySelectorAll("button.recall[data-until]")) {
    if (Number(button.dataset.until) <= now) button.remove();
  }
}

// Goes to message `number` (a reply's quote was clicked): scrolled to and marked a moment;
// one not drawn yet is asked for (earlier messages), and gone to once it comes.
let goingTo = 0, askedAt = 0;
function goTo(root, page, number) {
  goingTo = number;
  const target = document.getElementById("m" + number);
  if (target) {
    goingTo = 0;
    askedAt = 0;
    target.scrollIntoView({ block: "center" });
    target.classList.add("flash");
    // A message is a stop for the keyboard already: the focus goes to it.
    target.focus({ preventScroll: true });
    setTimeout(() => target.classList.remove("flash"), 1600);
    return;
  }
  // Earlier messages, 200 at a time, asked again each time more came, until it is there.
  const first = root.querySelector(".messages .message");
  const shown = first ? Number(first.dataset.number) : 0;
  if (!first || shown <= number || askedAt === shown) { if (!first || shown <= number) goingTo = 0; return; }
  askedAt = shown;
  post(page, { do: "more", count: Math.min(200, Math.max(1, shown - number + 2)) });
}

// The browser's notifications: asked for only when the person clicks "Notify me", never on
// load. A notification says who wrote; the words too only when the person said so (a choice the
// browser keeps).
function notifications() {
  const ask = document.querySelector("button.notify-ask"), words = document.querySelector("label.notify-text");
  if (!("Notification" in window)) return;
  const show = () => {
    if (ask) ask.hidden = Notification.permission !== "default";
    if (words) words.hidden = Notification.permission !== "granted";
  };
  if (ask) ask.addEventListener("click", () => Notification.requestPermission().then(show));
  const box = words && words.querySelector("input");
  if (box) {
    box.checked = localStorage.getItem("imhost-notify-text") === "on";
    box.addEventListener("change", () => localStorage.setItem("imhost-notify-text", box.checked ? "on" : "off"));
  }
  show();
}

// Notifies of a message from `who` (its words `text` too, when the person chose that).
function notifyMessage(who, text) {
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const words = localStorage.getItem("imhost-notify-text") === "on" && text ? text : "";
  try { new Notification(t("New message from {0}", who), { body: words, tag: "imhost-" + who }); } catch (error) { /* a browser that notifies only from a worker */ }
}

// The Voice item: a press starts recording from the microphone (the browser asks the person
// first), a second press stops and sends, Escape drops it. At most data-limit seconds (the
// host's Voice.secondsLimit) and 1 MB: recording stops by itself there and sends. The bytes go
// to the server as they are; it decodes them whole, and sends them as the chat's /voice would.
let recording = null;
function voiceButton(root) { return root.querySelector("[data-voice]"); }
function showRecording(root) {
  const button = voiceButton(root);
  if (!button) return;
  const seconds = recording ? Math.floor((Date.now() - recording.started) / 1000) : 0;
  button.setAttribute("aria-pressed", recording ? "true" : "false");
  button.classList.toggle("recording", !!recording);
  button.textContent = recording ? t("Send voice {0}", Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0")) : t("Voice");
}
function toggleRecording(root, page) {
  if (recording) { recording.finish(true); return; }
  if (!navigator.mediaDevices || !window.MediaRecorder) { said(t("Not sent: this browser cannot record sound."), true); return; }
  const limit = Number((voiceButton(root) || { dataset: {} }).dataset.limit || 60);
  navigator.mediaDevices.getUserMedia({ audio: true }).then((stream) => {
    const type = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus"].find((each) => MediaRecorder.isTypeSupported(each));
    const release = () => stream.getTracks().forEach((track) => track.stop());
    if (!type) { release(); said(t("Not sent: this browser cannot record Opus sound."), true); return; }
    const recorder = new MediaRecorder(stream, { mimeType: type, audioBitsPerSecond: 32000 });
    const parts = [];
    let size = 0, send = true;
    recorder.ondataavailable = (event) => {
      parts.push(event.data);
      size += event.data.size;
      if (size > 1000000 && recorder.state === "recording") recorder.stop();
    };
    recorder.onstop = () => {
      release();
      clearInterval(recording.tick);
      clearTimeout(recording.end);
      recording = null;
      showRecording(root);
      if (!send || size === 0) return;
      fetch("/page/" + encodeURIComponent(page) + "/voice", { method: "POST", body: new Blob(parts, { type }), credentials: "same-origin",
                                                             headers: { "Content-Type": "application/octet-stream" } })
        .then((reply) => { if (!reply.ok) return reply.text().then((why) => said(why.trim(), true)); });
    };
    recording = {
      started: Date.now(),
      finish: (keep) => { send = keep; if (recorder.state !== "inactive") recorder.stop(); },
      tick: setInterval(() => showRecording(root), 500),
      end: setTimeout(() => { if (recorder.state === "recording") recorder.stop(); }, limit * 1000 - 100),
    };
    recorder.start(1000);
    showRecording(root);
  }, (error) => said(error && error.name === "NotAllowedError"
    ? t("Not sent: this page may not use the microphone. Allow it in the browser's settings for this site, then try again.")
    : t("Not sent: no microphone could be opened."), true));
}

// Something the page itself says (a refusal its request was answered).
function said(text, alert) { notify({ text, dev: text, alert: !!alert }); }

function devView() { return document.body.classList.contains("dev-on"); }

// Times in the reader's own zone: the server writes UTC, with the instant in datetime.
function localTimes(root) {
  for (const time of root.querySelectorAll("time[datetime]")) {
    const instant = Number(time.getAttribute("datetime"));
    if (instant > 0) time.textContent = new Date(instant).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
}

// Where the keyboard's focus is inside `element`: "" for the element itself, or the control it
// is on, named by what it is and does (its tag, first class and data attributes), so that a new
// drawing of it gets it back even when controls came or went before it (Try again, Recall).
function focusPlace(element) {
  const active = document.activeElement;
  if (!element || !active || !element.contains(active)) return null;
  if (active === element) return "";
  let selector = active.tagName.toLowerCase() + (active.classList.length > 0 ? "." + CSS.escape(active.classList[0]) : "");
  for (const name of active.getAttributeNames()) {
    if (name.startsWith("data-")) selector += "[" + name + "=\"" + CSS.escape(active.getAttribute(name)) + "\"]";
  }
  return selector;
}
function giveFocusBack(element, place) {
  if (!element || place === null) return;
  const target = place === "" ? element : element.querySelector(place) || element;
  target.focus({ preventScroll: true });
}

// Puts a new drawing of the page in place, keeping the message the reader looked at where it
// was (or the newest in view, when they were at the end) and what they were typing.
function replacePage(root, html) {
  const list = root.querySelector(".messages");
  const place = readingPlace(list);
  const input = root.querySelector("form[data-send] input");
  const typed = input ? input.value : "", focused = input && document.activeElement === input;
  // A message (or a control in it) the keyboard was on keeps the focus in the new drawing.
  const focusedMessage = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".message") : null;
  const messageFocus = focusedMessage ? { id: focusedMessage.id, place: focusPlace(focusedMessage) } : null;
  const toolsFocused = document.activeElement && document.activeElement.closest && document.activeElement.closest(".tools")
    ? focusPlace(root.querySelector(".tools")) : null;
  // What the reader opened (the menu, a placeholder's why) stays open in the new drawing.
  const key = (details) => (details.closest(".message") ? details.closest(".message").id : "") + " " + details.className;
  const open = new Set(Array.from(root.querySelectorAll("details[open]"), key));
  const more = new Set(Array.from(root.querySelectorAll(".message .bubble.text.open"), (text) => text.closest(".message").id));
  const cards = cardState(root);
  root.innerHTML = html;
  restoreCards(root, cards);
  for (const details of root.querySelectorAll("details")) { if (open.has(key(details))) details.open = true; }
  for (const id of more) { const text = document.getElementById(id); if (text) showMore(text.querySelector(".bubble.text")); }
  localTimes(root);
  keepReadingPlace(root.querySelector(".messages"), place);
  const again = root.querySelector("form[data-send] input");
  if (again) { again.value = typed; if (focused) again.focus(); }
  showTools(root);
  if (messageFocus) giveFocusBack(document.getElementById(messageFocus.id), messageFocus.place);
  if (toolsFocused !== null) giveFocusBack(root.querySelector(".tools"), toolsFocused);
}

// The bar's items behind the Tools button on a phone: whether they are shown outlives a new
// drawing of the page.
let toolsOpen = false;
function showTools(root) {
  const tools = root.querySelector(".tools"), toggle = root.querySelector("button.tools-toggle");
  if (!tools || !toggle) return;
  tools.classList.toggle("open", toolsOpen);
  toggle.setAttribute("aria-expanded", String(toolsOpen));
}

// Where the reader is in the list: at its end, or at a message (its id and how far down).
function readingPlace(list) {
  const place = { atEnd: !list || list.scrollHeight - list.scrollTop - list.clientHeight < 8, anchor: null, offset: 0 };
  if (list && !place.atEnd) {
    for (const message of list.querySelectorAll(".message")) {
      if (message.offsetTop + message.offsetHeight > list.scrollTop) { place.anchor = message.id; place.offset = message.offsetTop - list.scrollTop; break; }
    }
  }
  return place;
}

function keepReadingPlace(list, place) {
  if (!list) return;
  const kept = place.anchor && document.getElementById(place.anchor);
  list.scrollTop = kept ? kept.offsetTop - place.offset : list.scrollHeight;
}

// What changed in the page, by message (PageHTML.changes): only those elements are drawn
// again; what the reader opened in a message drawn again stays open.
function applyChanges(root, ops) {
  const list = root.querySelector(".messages");
  if (!list) return;
  let place = readingPlace(list);
  for (const op of ops) {
    if (op.op === "append") {
      list.insertAdjacentHTML("beforeend", op.html);
      localTimes(list.lastElementChild);
      // What the reader sent shows where they can see it: the list goes to its end.
      if (list.lastElementChild.classList.contains("sent")) place = { atEnd: true, anchor: null, offset: 0 };
    } else if (op.op === "replace") {
      const was = document.getElementById(op.id);
      if (!was) continue;
      const opened = Array.from(was.querySelectorAll("details[open]"), (details) => details.className);
      const more = was.querySelector(".bubble.text.open") !== null;
      // A recording being played goes on playing: its player moves to the new drawing.
      const playing = Array.from(was.querySelectorAll("audio")).find((audio) => !audio.paused);
      const focused = focusPlace(was), cards = cardState(was);
      was.insertAdjacentHTML("afterend", op.html);
      const now = was.nextElementSibling;
      restoreCards(now, cards);
      was.remove();
      const fresh = playing && now.querySelector("audio");
      if (fresh) fresh.replaceWith(playing);
      for (const details of now.querySelectorAll("details")) { if (opened.includes(details.className)) details.open = true; }
      if (more) showMore(now.querySelector(".bubble.text"));
      localTimes(now);
      giveFocusBack(now, focused);
    } else if (op.op === "remove") {
      const gone = document.getElementById(op.id);
      if (gone) gone.remove();
    } else if (op.op === "earlier") {
      const older = list.querySelector("button.older");
      if (older) older.remove();
      if (op.html) list.insertAdjacentHTML("afterbegin", op.html);
    }
  }
  keepReadingPlace(list, place);
}

// The questions Clear and Report ask, each in a dialog of the page's own (Escape or Cancel:
// nothing happens); the act is posted only once the person says so.
const questions = {
  clear: { title: "Clear this chat?", act: "Clear chat",
           text: "Every message of this chat leaves this device. Your other devices keep theirs." },
  report: { title: "Report this person?", act: "Report",
            text: "The app's team gets a report of this person with their last 5 messages in this chat. They are not told." },
};
function ask(kind, page) {
  const question = questions[kind];
  if (!question) return;
  const id = kind + "-dialog";
  let dialog = document.getElementById(id);
  if (!dialog) {
    dialog = document.createElement("dialog");
    dialog.id = id;
    dialog.className = "ask";
    dialog.setAttribute("aria-labelledby", id + "-title");
    const title = document.createElement("h2");
    title.id = id + "-title";
    title.textContent = t(question.title);
    const text = document.createElement("p");
    text.textContent = t(question.text);
    const form = document.createElement("form");
    form.method = "dialog";
    const cancel = document.createElement("button");
    cancel.value = "cancel";
    cancel.autofocus = true;
    cancel.textContent = t("Cancel");
    const act = document.createElement("button");
    act.value = kind;
    act.className = "danger";
    act.textContent = t(question.act);
    form.append(cancel, " ", act);
    dialog.append(title, text, form);
    document.body.append(dialog);
    dialog.addEventListener("close", () => { if (dialog.returnValue === kind) post(dialog.dataset.page, { do: kind }); });
  }
  dialog.dataset.page = page;
  dialog.returnValue = "";
  dialog.showModal();
}

// A long text shows the rest where it stands ("Show more"), and stays open in later drawings.
function showMore(text) {
  if (!text) return;
  text.classList.add("open");
  const button = text.querySelector("button.more");
  if (button) button.setAttribute("aria-expanded", "true");
}

// The "Reconnecting…" line while the server is away: sending is off (what is typed stays), and
// once a server answers again the page is opened anew.
function awayBanner(root) {
  const banner = document.createElement("p");
  banner.className = "reconnecting";
  banner.setAttribute("role", "status");
  banner.textContent = t("Reconnecting…");
  banner.hidden = true;
  root.before(banner);
  let live = true, trying = false;
  const set = (on) => {
    live = on;
    banner.hidden = on;
    // Only what this turned off is turned on again: a control the server drew disabled stays so.
    if (on) {
      for (const control of root.querySelectorAll("button[data-away]")) { control.disabled = false; delete control.dataset.away; }
    } else {
      for (const control of root.querySelectorAll("button:not([disabled])")) { control.disabled = true; control.dataset.away = "1"; }
    }
  };
  const rejoin = () => {
    if (trying) return;
    trying = true;
    const again = () => fetch("/static/icon.svg", { cache: "no-store", credentials: "same-origin" })
      .then((reply) => {
        if (!reply.ok) throw new Error("not yet");
        const input = root.querySelector("form[data-send] input");
        if (input && input.value) sessionStorage.setItem("imhost-draft " + location.href, input.value);
        location.reload();
      })
      .catch(() => setTimeout(again, 1000));
    again();
  };
  return { live: set, isLive: () => live, rejoin };
}

// Reading is the person's act: the newest message on the page counts as seen only while the
// window is visible, and the server is told which (never because the page was drawn).
function seer(root, page) {
  let told = 0;
  return () => {
    if (document.visibilityState !== "visible") return;
    const numbers = Array.from(root.querySelectorAll(".messages .message[data-number]"), (message) => Number(message.dataset.number));
    const newest = Math.max(0, ...numbers);
    if (newest <= told) return;
    told = newest;
    post(page, { do: "seen", through: newest });
  };
}

// Every tab of this browser hears its chat on one event stream: a browser gives a server six
// connections, and a stream a tab filled them by the fifth chat. The tab that holds the Web
// Lock "imhost-events" keeps the stream, asks the server for the pages the tabs show, and hands
// each page's events to the tabs over a BroadcastChannel; when that tab closes, the lock goes to
// another, which opens the stream again. A browser without both gives each tab its own stream.
function randomID() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
// When the shared stream's steps were first taken, for the browser's own tools (and the
// benchmark): the lock held, the stream joined, its first event heard.
const markOnce = (name) => { if (performance.getEntriesByName(name).length === 0) performance.mark(name); };
const sharedEvents = (() => {
  if (!navigator.locks || typeof BroadcastChannel !== "function") return null;
  const tab = randomID();
  const channel = new BroadcastChannel("imhost-events");
  const listeners = new Map();   // this tab's pages: page id -> Map(event -> [listener])
  let stream = null, streamID = "", live = false;
  const wanted = new Map();      // the stream's tab only: page id -> Map(tab -> when last heard)
  const held = new Map();        // this tab's pages not listening yet: page id -> [[event, data]]
  const deliver = (page, event, data) => {
    if (held.has(page)) return held.get(page).push([event, data]);
    const byEvent = listeners.get(page);
    for (const listener of (byEvent && byEvent.get(event)) || []) listener({ data });
  };
  // What the stream's tab says, heard by every tab (itself too).
  const heard = (message) => {
    if (message.kind === "for") deliver(message.page, message.event, message.data);
    else if (message.kind === "live") for (const page of listeners.keys()) deliver(page, message.live ? "open" : "error", "");
    else if (message.kind === "gone") deliver(message.page, "gone", "");
  };
  const say = (message) => { channel.postMessage(message); heard(message); };
  const ask = (page, verb) => fetch("/stream/" + streamID + "/" + verb + "?page=" + encodeURIComponent(page),
                                    { method: "POST", credentials: "same-origin" })
    .then((reply) => { if (reply.status === 404 && verb === "watch") say({ kind: "gone", page }); })
    .catch(() => {});
  const want = (page, who) => {
    if (!stream) return;
    let tabs = wanted.get(page);
    if (!tabs) {
      wanted.set(page, tabs = new Map());
      if (live) ask(page, "watch");
    } else if (live && !tabs.has(who)) {
      // Another tab of a page already shown: asked for again, the server draws it for all.
      ask(page, "watch");
    }
    tabs.set(who, Date.now());
  };
  const drop = (page, who) => {
    const tabs = wanted.get(page);
    if (!stream || !tabs) return;
    tabs.delete(who);
    if (tabs.size > 0) return;
    wanted.delete(page);
    if (live) ask(page, "unwatch");
  };
  const tell = (message) => {
    channel.postMessage(message);
    if (message.kind === "want") want(message.page, message.tab); else drop(message.page, message.tab);
  };
  channel.addEventListener("message", (event) => {
    const message = event.data;
    if (message.kind === "want") want(message.page, message.tab);
    else if (message.kind === "drop") drop(message.page, message.tab);
    else if (message.kind === "who") for (const page of listeners.keys()) channel.postMessage({ kind: "want", page, tab });
    else heard(message);
  });
  // A tab says again every 30 s what it shows: one that went without a word (crashed, or
  // discarded by the browser) is forgotten after three minutes, and its chat's page with it
  // (a hidden tab's timers may run only once a minute).
  setInterval(() => {
    for (const page of listeners.keys()) tell({ kind: "want", page, tab });
    if (!stream) return;
    const now = Date.now();
    for (const [page, tabs] of wanted) {
      for (const [who, last] of tabs) if (now - last > 180000) drop(page, who);
    }
  }, 30000);
  // Asked for once this tab shows a chat, and held until it closes, which lets it go to the next.
  let asked = false;
  // Let go as the page goes (not when the browser gets round to destroying it): the page that
  // replaces it in this tab, or another tab, takes the stream at once.
  const askForStream = () => navigator.locks.request("imhost-events", () => new Promise((release) => {
    window.addEventListener("pagehide", () => { stream.close(); release(); }, { once: true });
    markOnce("imhost:stream-lock");
    streamID = randomID() + randomID();
    // This tab's pages come with the stream: drawn as it opens, not a question later. The
    // browser opens the same address again after the server was away.
    const opening = Array.from(listeners.keys());
    stream = new EventSource("/events?stream=" + streamID + opening.map((page) => "&watch=" + encodeURIComponent(page)).join(""));
    for (const page of listeners.keys()) want(page, tab);
    channel.postMessage({ kind: "who" });
    // Joined (again, after the server was away): every other page shown is asked for anew, and
    // one the address names that no tab shows any more is let go.
    stream.addEventListener("joined", () => {
      markOnce("imhost:stream-joined");
      live = true;
      say({ kind: "live", live: true });
      for (const page of wanted.keys()) if (!opening.includes(page)) ask(page, "watch");
      for (const page of opening) if (!wanted.has(page)) ask(page, "unwatch");
    });
    stream.addEventListener("error", () => {
      live = false;
      say({ kind: "live", live: false });
      // Refused for good (not a server that is away): every chat is opened again.
      if (stream.readyState === EventSource.CLOSED) for (const page of wanted.keys()) say({ kind: "gone", page });
    });
    stream.addEventListener("for", (event) => {
      markOnce("imhost:stream-first-event");
      const wrapped = JSON.parse(event.data);
      say({ kind: "for", page: wrapped.page, event: wrapped.event, data: wrapped.data });
    });
  }));
  return (page) => {
    listeners.set(page, new Map());
    held.set(page, []);
    if (!asked) {
      asked = true;
      askForStream();
    }
    tell({ kind: "want", page, tab });
    const leave = () => { if (listeners.delete(page)) tell({ kind: "drop", page, tab }); };
    window.addEventListener("pagehide", leave);
    return {
      addEventListener(event, listener) {
        const byEvent = listeners.get(page);
        if (!byEvent) return;
        if (!byEvent.has(event)) byEvent.set(event, []);
        byEvent.get(event).push(listener);
      },
      close: leave,
      readyState: 0,
      // What came before the page listened is handled now, and what comes after as it comes.
      start() {
        const queue = held.get(page) || [];
        held.delete(page);
        for (const [event, data] of queue) deliver(page, event, data);
      },
    };
  };
})();

// A chat's page (its id in the head) starts as this script runs in the document's head, before
// the page is laid out: its worker at once (the page's drawing is ready when its stream asks),
// and its stream, whose events are held until the page listens (chatPage).
const early = (() => {
  const meta = document.querySelector('meta[name="imhost-page"]');
  if (!meta) return null;
  fetch("/page/" + encodeURIComponent(meta.content) + "/open", { method: "POST", credentials: "same-origin" }).catch(() => {});
  return sharedEvents ? { page: meta.content, events: sharedEvents(meta.content) } : null;
})();

function chatPage(root) {
  const page = root.dataset.page;
  const seen = seer(root, page);
  document.addEventListener("visibilitychange", seen);
  const events = early && early.page === page ? early.events
    : sharedEvents ? sharedEvents(page) : new EventSource("/events?page=" + encodeURIComponent(page));
  const away = awayBanner(root);
  events.addEventListener("open", () => away.live(true));
  // The server went away (a restart, a network hiccup): the page says so, sends nothing, and
  // the browser tries the stream again by itself. A new server does not know this page: once it
  // answers, the chat is opened again (what was typed kept), showing what came meanwhile.
  events.addEventListener("error", () => {
    away.live(false);
    if (events.readyState === EventSource.CLOSED) away.rejoin();
  });
  // The server does not know this page (it was restarted): the chat is opened again.
  events.addEventListener("gone", () => { away.live(false); away.rejoin(); });
  // Back from the browser's back-forward cache, the page heard nothing meanwhile: drawn anew.
  window.addEventListener("pageshow", (event) => { if (event.persisted) location.reload(); });
  const draftKey = "imhost-draft " + location.href;
  let first = true;
  // Opened at a message (a search's result: #mN): gone to once the chat is drawn.
  const at = /^#m([0-9]+)$/.exec(location.hash);
  if (at) goingTo = Number(at[1]);
  events.addEventListener("page", (event) => {
    replacePage(root, event.data);
    announceNew();
    showReplying(root);
    expireRecalls(root);
    if (goingTo) goTo(root, page, goingTo);
    if (first) {
      first = false;
      const draft = sessionStorage.getItem(draftKey);
      const input = root.querySelector("form[data-send] input");
      if (draft && input && input.value === "") input.value = draft;
      sessionStorage.removeItem(draftKey);
    }
    if (!away.isLive()) away.live(false);
    seen();
  });
  // No room for this chat (every page the server may run is watched): it says why, and the
  // stream is not tried again.
  events.addEventListener("refused", (event) => {
    events.close();
    const why = document.createElement("p");
    why.className = "refusal";
    why.setAttribute("role", "alert");
    why.textContent = event.data;
    root.replaceChildren(why);
  });
  // Messages that came while the tab is not in view: counted in its title, and notified, each
  // once (by number: a drawing of the whole page or of what changed alike).
  const baseTitle = document.title;
  let unseen = 0, newestKnown = 0;
  const received = () => Array.from(root.querySelectorAll(".message.received"), (message) => message);
  const newest = () => received().reduce((most, message) => Math.max(most, Number(message.dataset.number) || 0), 0);
  // New messages from the peer, said once by the page's polite live region (#announce): who
  // wrote and what, the newest of them (with how many came, when several did), never the
  // history (the list itself is not live). The first drawing is history; later drawings, whole
  // or by message, are looked at for what is newer than what was said.
  let announcedThrough = -1;
  const announceNew = () => {
    const latest = newest();
    if (announcedThrough < 0) { announcedThrough = latest; return; }
    const fresh = received().filter((message) => (Number(message.dataset.number) || 0) > announcedThrough);
    announcedThrough = Math.max(announcedThrough, latest);
    const region = document.getElementById("announce");
    if (!region || fresh.length === 0) return;
    const message = fresh[fresh.length - 1];
    const who = (message.querySelector(".meta .who") || {}).textContent || "";
    const body = message.querySelector(".bubble, figure img");
    const words = body ? (body.getAttribute("alt") || body.textContent).replace(/\s+/g, " ").trim().slice(0, 200) : "";
    region.textContent = "";
    // A change of text the reader did not cause is read; the same words twice need the clearing.
    setTimeout(() => { region.textContent = (fresh.length > 1 ? t("{0} new messages.", fresh.length) + " " : "") + who + ": " + words; }, 50);
  };
  const countUnseen = () => { document.title = unseen > 0 ? "(" + unseen + ") " + baseTitle : baseTitle; };
  let drawn = false;
  const arrivedWhileAway = () => {
    // What the first drawing shows came before: only what comes after is new.
    if (!drawn || !document.hidden) { drawn = true; newestKnown = Math.max(newestKnown, newest()); return; }
    for (const message of received()) {
      const number = Number(message.dataset.number) || 0;
      if (number <= newestKnown) continue;
      newestKnown = number;
      unseen += 1;
      const bubble = message.querySelector(".bubble");
      notifyMessage((message.querySelector(".meta .who") || {}).textContent || "", bubble ? bubble.textContent.trim().slice(0, 120) : "");
    }
    countUnseen();
  };
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) return;
    unseen = 0;
    newestKnown = Math.max(newestKnown, newest());
    countUnseen();
  });
  events.addEventListener("page", () => arrivedWhileAway());
  // A frame of the workbench (imhost preview) shows one message of the page alone: data-only.
  const only = document.body.dataset.only;
  const showOnly = () => {
    if (!only) return;
    for (const message of root.querySelectorAll(".message")) message.hidden = message.dataset.number !== only;
  };
  events.addEventListener("page", showOnly);
  events.addEventListener("change", showOnly);
  events.addEventListener("change", (event) => {
    const ops = JSON.parse(event.data);
    applyChanges(root, ops);
    announceNew();
    arrivedWhileAway();
    expireRecalls(root);
    if (goingTo) goTo(root, page, goingTo);
    if (!away.isLive()) away.live(false);
    seen();
  });
  // The peer is typing: said under the title until 6 s after the last signal. Where the peer
  // stands (online, or when last seen) is said there otherwise; nothing of it is stored.
  let typingUntil = 0, peerSeen = null, typedAt = 0;
  const peerLine = () => {
    const header = root.querySelector("header.title");
    if (!header) return;
    let line = header.querySelector(".peer-status");
    if (!line) {
      line = document.createElement("p");
      line.className = "peer-status";
      line.setAttribute("aria-live", "polite");
      header.append(line);
    }
    const who = header.dataset.peer || "";
    if (Date.now() < typingUntil) line.textContent = t("{0} is typing…", who);
    else if (peerSeen && peerSeen.online) line.textContent = t("online");
    else if (peerSeen && peerSeen.lastSeen) line.textContent = t("last seen {0}", new Date(peerSeen.lastSeen).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" }));
    else line.textContent = "";
  };
  events.addEventListener("typing", () => {
    typingUntil = Date.now() + 6000;
    peerLine();
    setTimeout(peerLine, 6100);
  });
  events.addEventListener("seen", (event) => { peerSeen = JSON.parse(event.data); peerLine(); });
  events.addEventListener("page", () => peerLine());
  // Typing here: the peer is told, at most every 3 s while keys come.
  root.addEventListener("input", (event) => {
    if (!event.target.closest || !event.target.closest("form[data-send]") || event.target.value === "") return;
    const now = Date.now();
    if (now - typedAt < 3000) return;
    typedAt = now;
    post(page, { do: "typing" });
  });
  events.addEventListener("notice", (event) => {
    const notice = JSON.parse(event.data);
    notify(notice);
    if (notice.inputs) showInputErrors(notice.inputs);
    // A message in another chat, not in view here.
    if (notice.arrived && document.hidden) notifyMessage(notice.arrived, "");
    // What a recalled message said comes back to the input, to edit and send again.
    const input = root.querySelector("form[data-send] input");
    if (notice.draft && input && input.value === "") { input.value = notice.draft; input.focus(); }
  });
  setInterval(() => expireRecalls(root), 5000);
  events.addEventListener("ended", (event) => { notify(JSON.parse(event.data)); events.close(); });
  // The 📎 button: pick a file, and its bytes go to the server as they are, its name in a
  // header; the server takes it (at most limits.fileBytes) and sends it as the chat's /file would.
  root.addEventListener("change", (event) => {
    const input = event.target;
    if (!input.classList || !input.classList.contains("file-pick") || !input.files || input.files.length === 0) return;
    const file = input.files[0];
    input.value = "";
    fetch("/page/" + encodeURIComponent(page) + "/file", { method: "POST", body: file, credentials: "same-origin",
                                                          headers: { "Content-Type": "application/octet-stream", "X-File-Name": encodeURIComponent(file.name) } })
      .then((reply) => { if (!reply.ok) return reply.text().then((why) => said(why.trim(), true)); });
  });
  // The Photo item: pick a file, and its bytes go to the server as they are; the server checks
  // them (a PNG, JPEG or WebP within the limit) and sends them as the chat's /photo would.
  root.addEventListener("change", (event) => {
    const input = event.target;
    if (!input.classList || !input.classList.contains("photo-file") || !input.files || input.files.length === 0) return;
    const file = input.files[0];
    input.value = "";
    fetch("/page/" + encodeURIComponent(page) + "/photo", { method: "POST", body: file, credentials: "same-origin",
                                                           headers: { "Content-Type": "application/octet-stream" } })
      .then((reply) => { if (!reply.ok) return reply.text().then((why) => said(why.trim(), true)); });
  });
  root.addEventListener("click", (event) => {
    const toggle = event.target.closest("button.tools-toggle");
    if (toggle && root.contains(toggle)) {
      toolsOpen = !toolsOpen;
      showTools(root);
      return;
    }
    const more = event.target.closest("[data-more]");
    if (more && root.contains(more)) {
      const text = more.closest(".bubble.text");
      showMore(text);
      // The reader goes on where the fold was.
      const rest = text && text.querySelector(".rest");
      if (rest) { rest.tabIndex = -1; rest.focus({ preventScroll: true }); }
      return;
    }
    // Clear and Report ask first: nothing happens until the person says so.
    const asking = event.target.closest("[data-ask]");
    if (asking && root.contains(asking)) {
      event.preventDefault();
      ask(asking.dataset.ask, page);
      return;
    }
    // The Location item: where the browser says the person is (it asks them first), sent as
    // the built-in location message; no map is fetched.
    const place = event.target.closest("[data-location]");
    if (place && root.contains(place)) {
      event.preventDefault();
      if (!navigator.geolocation) { said(t("Not sent: this browser cannot say where you are."), true); return; }
      navigator.geolocation.getCurrentPosition(
        (at) => post(page, { do: "location", latitude: at.coords.latitude, longitude: at.coords.longitude }),
        (error) => said(error.code === 1
          ? t("Not sent: this page may not know your location. Allow it in the browser's settings for this site, then try again.")
          : t("Not sent: your location could not be found. Try again in a moment."), true),
        { timeout: 20000, maximumAge: 60000 });
      return;
    }
    const quote = event.target.closest("[data-quote]");
    if (quote && root.contains(quote)) {
      event.preventDefault();
      goTo(root, page, Number(quote.dataset.quote));
      return;
    }
    const reacting = event.target.closest("[data-react]");
    if (reacting && root.contains(reacting)) {
      event.preventDefault();
      chooseReaction(reacting.closest(".message"));
      return;
    }
    const reply = event.target.closest("[data-reply]");
    if (reply && root.contains(reply)) {
      event.preventDefault();
      const message = reply.closest(".message");
      if (!message) return;
      replying = replyTarget(message);
      showReplying(root);
      const input = root.querySelector("form[data-send] input");
      if (input) input.focus();
      return;
    }
    const voice = event.target.closest("[data-voice]");
    if (voice && root.contains(voice)) {
      event.preventDefault();
      toggleRecording(root, page);
      return;
    }
    const attach = event.target.closest("[data-file]");
    if (attach && root.contains(attach)) {
      event.preventDefault();
      const input = root.querySelector("input.file-pick");
      if (input) input.click();
      return;
    }
    const photo = event.target.closest("[data-photo]");
    if (photo && root.contains(photo)) {
      event.preventDefault();
      const input = root.querySelector("input.photo-file");
      if (input) input.click();
      return;
    }
    // A card's inputs are filled in, not taps of the card.
    if (event.target.closest(".card-input")) return;
    const target = event.target.closest("[data-do]");
    if (!target || !root.contains(target)) return;
    event.preventDefault();
    // A button that sends the card's answers (the host checks them first).
    const form = target.classList.contains("submits") ? target.closest("form.card-form") : null;
    if (form) {
      post(page, { do: "submit", message: Number(target.dataset.message), button: target.dataset.button, values: cardValues(form),
                   revision: Number(form.dataset.revision || 0) });
      return;
    }
    // A reaction chosen closes the choices.
    const choices = target.closest(".react-choices");
    if (choices) {
      // The focus goes back to React (and stays in the message when it is drawn anew).
      const message = choices.closest(".message"), opener = message.querySelector("button.react");
      if (opener && choices.contains(document.activeElement)) opener.focus();
      chooseReaction(message);
    }
    post(page, actOf(target));
  });
  root.addEventListener("submit", (event) => {
    const form = event.target.closest("form[data-send]");
    if (!form) return;
    event.preventDefault();
    const input = form.querySelector("input");
    const text = input.value;
    if (text.trim() === "") return;
    // What the store would refuse is refused here, and stays in the input: never cut.
    const limit = Number(root.dataset.textLimit || 0);
    const size = new TextEncoder().encode(JSON.stringify({ text })).length;
    if (limit > 0 && size > limit) {
      said(t("Not sent: the message is too long ({0} KB; at most {1} KB). Shorten it, or send it in parts.", Math.ceil(size / 1024), Math.floor(limit / 1024)), true);
      return;
    }
    input.value = "";
    // The next message typed says so at its first key.
    typedAt = 0;
    // Whatever it starts with, a line typed is text; a reply names the message it answers.
    if (replying) {
      post(page, { do: "reply", message: replying.number, text });
      replying = null;
      showReplying(root);
    } else {
      post(page, { do: "text", text });
    }
  });
  root.addEventListener("keydown", (event) => {
    // Between messages with the arrow keys (Home, End: the first, the last), as in a feed.
    const message = event.target.classList && event.target.classList.contains("message") ? event.target : null;
    if (message && ["ArrowUp", "ArrowDown", "Home", "End"].includes(event.key)) {
      const all = Array.from(root.querySelectorAll(".messages .message"));
      const at = all.indexOf(message);
      const next = event.key === "Home" ? all[0] : event.key === "End" ? all[all.length - 1] : all[at + (event.key === "ArrowUp" ? -1 : 1)];
      if (next) { event.preventDefault(); next.focus(); next.scrollIntoView({ block: "nearest" }); }
      if (!next && event.key === "ArrowUp") { const older = root.querySelector("button.older"); if (older) { event.preventDefault(); older.focus(); } }
      return;
    }
    // What acts on a click and is not a button (a line's own view) acts on Enter and Space.
    if ((event.key === "Enter" || event.key === " ") && event.target.matches && event.target.matches("[role=button][data-do]")) {
      event.preventDefault();
      event.target.click();
      return;
    }
    // Escape drops a recording first, wherever the focus is (the Voice item may be hidden by now).
    if (event.key === "Escape" && recording) { recording.finish(false); return; }
    // Escape closes what opened: the menu, the tools, a placeholder's why.
    if (event.key === "Escape") {
      const details = event.target.closest("details[open]");
      if (details) { details.open = false; details.querySelector("summary").focus(); event.preventDefault(); return; }
      const tools = event.target.closest(".tools.open");
      if (tools) { toolsOpen = false; showTools(root); root.querySelector("button.tools-toggle").focus(); event.preventDefault(); return; }
    }
    const choices = event.key === "Escape" && event.target.closest(".react-choices");
    if (choices) { const message = choices.closest(".message"); chooseReaction(message); message.querySelector("button.react").focus(); return; }
    if (event.key === "Escape" && replying && event.target.closest("form[data-send]")) {
      replying = null;
      showReplying(root);
    }
  });
  let asking = false;
  root.addEventListener("scroll", (event) => {
    const list = event.target;
    if (!list.classList || !list.classList.contains("messages") || list.scrollTop > 4 || asking) return;
    const older = list.querySelector(".older");
    if (!older) return;
    asking = true;
    post(page, actOf(older)).finally(() => { asking = false; });
  }, true);
  // Everything listens now: what the stream brought meanwhile is handled, in order.
  if (events.start) events.start();
}

function startPage(root) {
  localTimes(root);
  // The unread messages of every chat, in the tab's title.
  const baseTitle = document.title;
  const countUnread = () => {
    const unread = Array.from(root.querySelectorAll(".unread"), (badge) => parseInt(badge.textContent, 10) || 0).reduce((a, b) => a + b, 0);
    document.title = unread > 0 ? "(" + unread + ") " + baseTitle : baseTitle;
  };
  countUnread();
  const events = new EventSource("/events?list=1");
  events.addEventListener("list", (event) => { root.innerHTML = event.data; localTimes(root); countUnread(); });
}

// The Notices button opens the list of every notice; with --dev, the toggle shows or hides the
// developer's view, as the reader left it.
function chrome() {
  const open = document.querySelector("button.notices-open"), dialog = document.getElementById("notice-dialog");
  if (open && dialog) open.addEventListener("click", () => dialog.showModal());
  const toggle = document.querySelector("[data-dev-toggle]");
  if (!toggle) return;
  const apply = () => document.body.classList.toggle("dev-on", toggle.checked);
  toggle.checked = localStorage.getItem("imhost-dev") !== "off";
  apply();
  toggle.addEventListener("change", () => { localStorage.setItem("imhost-dev", toggle.checked ? "on" : "off"); apply(); });
}

document.addEventListener("DOMContentLoaded", () => {
  chrome();
  // What the browser says of notifications (the permission, the stored choice) it says only
  // after asking its own process, 15-30 ms on a busy machine: asked once the page is idle, not
  // before the chat's first drawing.
  if (window.requestIdleCallback) requestIdleCallback(notifications, { timeout: 2000 }); else setTimeout(notifications, 200);
  const page = document.getElementById("page");
  // What the stream brought is let go to the page even if setting it up failed half-way.
  if (page) try { chatPage(page); } finally { if (early) early.events.start(); }
  const list = document.querySelector("[data-live=list]");
  if (list) startPage(list);
});
