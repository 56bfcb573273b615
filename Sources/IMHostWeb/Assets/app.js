// imhost web: the browser's side of a chat page. The server draws every page (escaped, in
// PageHTML.swift) and keeps it live over one event stream; this script only puts what comes in
// its place, keeps the reader where they were, and posts what is clicked or typed as the act
// the element names (data-do and its data: WebAction.swift), as JSON.
"use strict";

function post(page, act) {
  return fetch("/page/" + encodeURIComponent(page), { method: "POST", body: JSON.stringify(act), credentials: "same-origin",
                                                      headers: { "Content-Type": "application/json" } })
    .then((reply) => { if (!reply.ok) return reply.text().then((why) => said(why.trim(), "refused")); });
}

// The act an element names: what to do, and the numbers and button id it carries.
function actOf(element) {
  const act = { do: element.dataset.do };
  for (const key of ["message", "item", "count"]) {
    if (element.dataset[key] !== undefined) act[key] = Number(element.dataset[key]);
  }
  if (element.dataset.button !== undefined) act.button = element.dataset.button;
  return act;
}

function said(text, kind) {
  const aside = document.getElementById("said");
  if (!aside) return;
  const line = document.createElement("p");
  line.textContent = text;
  if (kind) line.className = kind;
  aside.append(line);
  while (aside.children.length > 6) aside.firstElementChild.remove();
}

// Puts a new drawing of the page in place, keeping the message the reader looked at where it
// was (or the newest in view, when they were at the end) and what they were typing.
function replacePage(root, html) {
  const list = root.querySelector(".messages");
  const atEnd = !list || list.scrollHeight - list.scrollTop - list.clientHeight < 8;
  let anchor = null, offset = 0;
  if (list && !atEnd) {
    for (const message of list.querySelectorAll(".message")) {
      if (message.offsetTop + message.offsetHeight > list.scrollTop) { anchor = message.id; offset = message.offsetTop - list.scrollTop; break; }
    }
  }
  const input = root.querySelector("form[data-send] input");
  const typed = input ? input.value : "", focused = input && document.activeElement === input;
  root.innerHTML = html;
  const next = root.querySelector(".messages");
  if (next) {
    const kept = anchor && document.getElementById(anchor);
    next.scrollTop = kept ? kept.offsetTop - offset : next.scrollHeight;
  }
  const again = root.querySelector("form[data-send] input");
  if (again) { again.value = typed; if (focused) again.focus(); }
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

function chatPage(root) {
  const page = root.dataset.page;
  const seen = seer(root, page);
  document.addEventListener("visibilitychange", seen);
  const events = new EventSource("/events?page=" + encodeURIComponent(page));
  events.addEventListener("page", (event) => { replacePage(root, event.data); seen(); });
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
  events.addEventListener("say", (event) => said(event.data));
  events.addEventListener("crash", (event) => said(event.data, "crash"));
  events.addEventListener("ended", (event) => { said(event.data, "ended"); events.close(); });
  // The Photo item: pick a file, and its bytes go to the server as they are; the server checks
  // them (a PNG, JPEG or WebP within the limit) and sends them as the chat's /photo would.
  root.addEventListener("change", (event) => {
    const input = event.target;
    if (!input.classList || !input.classList.contains("photo-file") || !input.files || input.files.length === 0) return;
    const file = input.files[0];
    input.value = "";
    fetch("/page/" + encodeURIComponent(page) + "/photo", { method: "POST", body: file, credentials: "same-origin",
                                                           headers: { "Content-Type": "application/octet-stream" } })
      .then((reply) => { if (!reply.ok) return reply.text().then((why) => said(why.trim(), "refused")); });
  });
  root.addEventListener("click", (event) => {
    const photo = event.target.closest("[data-photo]");
    if (photo && root.contains(photo)) {
      event.preventDefault();
      const input = root.querySelector("input.photo-file");
      if (input) input.click();
      return;
    }
    const target = event.target.closest("[data-do]");
    if (!target || !root.contains(target)) return;
    event.preventDefault();
    post(page, actOf(target));
  });
  root.addEventListener("submit", (event) => {
    const form = event.target.closest("form[data-send]");
    if (!form) return;
    event.preventDefault();
    const input = form.querySelector("input");
    const text = input.value;
    if (text.trim() === "") return;
    input.value = "";
    // Whatever it starts with, a line typed is text.
    post(page, { do: "text", text });
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
}

function startPage(root) {
  const events = new EventSource("/events?list=1");
  events.addEventListener("list", (event) => { root.innerHTML = event.data; });
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.getElementById("page");
  if (page) chatPage(page);
  const list = document.querySelector("[data-live=list]");
  if (list) startPage(list);
});
