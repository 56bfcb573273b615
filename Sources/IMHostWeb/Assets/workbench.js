// imhost preview: the line author's workbench. The server says the state on a stream of its own
// (the line, the build, each sample with its number in the samples' chat, its rule errors and the
// terminal's drawing); this script lays out a row for each sample: the chat page drawing that
// sample alone in frames (phone and desktop, light and dark), live, so its inputs fill and its
// buttons press as in a chat; the terminal's drawing; and what was found. A new build changes
// what is in the rows, never the rows the author is looking at: the frames stay, and so does
// where the page is scrolled.
"use strict";

const views = [
  { name: "Phone · light", width: "phone", scheme: "light" },
  { name: "Phone · dark", width: "phone", scheme: "dark" },
  { name: "Desktop · light", width: "desktop", scheme: "light" },
  { name: "Desktop · dark", width: "desktop", scheme: "dark" },
];

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

// A frame is as tall as what it shows (its body's height: the root's scroll height is never
// less than the frame's own, so it could only grow).
// A desktop frame is shown at half its size: its box beside it is as tall as it shows.
function fit(frame, box) {
  frame.addEventListener("load", () => {
    const body = frame.contentDocument && frame.contentDocument.body;
    if (!body) return;
    const resize = () => {
      const height = Math.max(48, Math.ceil(body.getBoundingClientRect().height));
      frame.style.height = height + "px";
      if (box) box.style.height = Math.ceil(height / 2) + 2 + "px";
    };
    new ResizeObserver(resize).observe(body);
    resize();
  });
}

// axe-core over one message of a frame (once it is drawn there): its findings, said under
// the sample, one item for each frame checked.
function check(frame, number, list) {
  // One check a frame at a time: a newer one asked meanwhile replaces the one waiting.
  const token = (Number(frame.dataset.check) || 0) + 1;
  frame.dataset.check = String(token);
  const attempt = (tries) => {
    if (frame.dataset.check !== String(token) || tries <= 0) return;
    const doc = frame.contentDocument;
    const target = doc && doc.body && doc.body.dataset.only && doc.readyState === "complete" && doc.getElementById("m" + number);
    if (target) return checkDrawn(frame, number, list, () => attempt(tries - 1));
    if (tries > 0) setTimeout(() => attempt(tries - 1), 250);
  };
  attempt(240);
}

// axe checks the message as it is when it runs (the page may have been drawn again since it was
// found); a run that fails (drawn again meanwhile, another run not over) is tried again.
// What each frame's message was when axe last checked it.
const checked = new WeakMap();

function checkDrawn(frame, number, list, again) {
  const win = frame.contentWindow, doc = frame.contentDocument;
  const run = () => {
    const target = doc.getElementById("m" + number);
    // axe runs once at a time in a window (it throws, not rejects, when asked meanwhile).
    if (!target || frame.dataset.axeRunning) return setTimeout(again, 250);
    // Checked as it is drawn now already: nothing to check again.
    const drawing = target.outerHTML;
    if (checked.get(frame) === drawing) return;
    checked.set(frame, drawing);
    frame.dataset.axeRunning = "yes";
    const over = () => { delete frame.dataset.axeRunning; };
    let running;
    try {
      running = win.axe.run(target, { resultTypes: ["violations"] });
    } catch (refused) {
      over();
      return setTimeout(again, 500);
    }
    running.finally(over).then((results) => {
      let item = list.querySelector("[data-frame='" + frame.dataset.scheme + "']");
      if (!item) { item = element("li"); item.dataset.frame = frame.dataset.scheme; list.append(item); }
      item.className = results.violations.length ? "bad" : "ok";
      item.textContent = frame.title + ": " + (results.violations.length
        ? results.violations.map((violation) => violation.id + " (" + violation.help + ", " + violation.nodes.length + ")").join("; ")
        : "no accessibility findings");
    }, () => setTimeout(again, 500));
  };
  if (win.axe) return run();
  if (doc.querySelector("script[data-axe]")) return setTimeout(again, 250);
  const script = doc.createElement("script");
  script.src = "/workbench/axe.js";
  script.dataset.axe = "";
  script.addEventListener("load", run);
  doc.head.append(script);
}

// A sample's row, by its number, key and name: a build that gives the same samples keeps its rows.
function sampleID(sample) { return sample.number + "\u0000" + sample.key + "\u0000" + sample.name; }

function row(main, chat, sample) {
  const section = element("section", "sample");
  section.dataset.id = sampleID(sample);
  const heading = element("h2");
  heading.append(element("span", "name", sample.name), " ", element("span", "key", sample.key));
  section.append(heading, element("ul", "findings rules"));
  const row = element("div", "views");
  for (const view of views) {
    const figure = element("figure", view.width);
    const frame = element("iframe", view.width);
    frame.title = sample.name + ", " + view.name.toLowerCase();
    frame.dataset.scheme = view.scheme;
    frame.loading = "lazy";
    frame.src = "/chat?url=" + encodeURIComponent(chat) + "&only=" + sample.number + "&scheme=" + view.scheme;
    if (view.width === "desktop") {
      const box = element("div", "half");
      box.append(frame);
      fit(frame, box);
      figure.append(element("figcaption", "", view.name + " (1280 px, at half size)"), box);
    } else {
      fit(frame);
      figure.append(element("figcaption", "", view.name + " (375 px)"), frame);
    }
    row.append(figure);
    // The terminal's drawing after the phones, the desktops on a row of their own.
    if (view.name === "Phone · dark") {
      const terminal = element("figure", "terminal");
      terminal.append(element("figcaption", "", "Terminal"), element("pre", "terminal"));
      row.append(terminal);
    }
  }
  section.append(row, element("ul", "findings axe"));
  return section;
}

function fill(section, sample, axe) {
  section.dataset.number = String(sample.number);
  const rules = section.querySelector(".findings.rules");
  rules.replaceChildren();
  if (sample.failure) rules.append(element("li", "", "Not drawn: " + sample.failure));
  for (const problem of sample.problems) {
    const item = element("li");
    item.append(element("span", "path", problem.path), ": " + problem.detail);
    rules.append(item);
  }
  rules.className = "findings rules " + (rules.children.length ? "bad" : "ok");
  if (!rules.children.length) rules.append(element("li", "", "Keeps every card rule"));
  section.querySelector("pre.terminal").textContent = sample.terminal || "";
  if (!axe) {
    section.querySelector(".findings.axe").replaceChildren(element("li", "", "The accessibility check needs axe-core: run make axe in the imhost checkout."));
    return;
  }
  const list = section.querySelector(".findings.axe");
  // Later, and on its own: nothing a check meets stops the laying out.
  for (const frame of section.querySelectorAll("iframe.phone")) setTimeout(() => check(frame, sample.number, list), 0);
}

function show(main, state) {
  const build = document.querySelector("header .build");
  const when = state.builtAt ? new Date(state.builtAt).toLocaleTimeString() : "";
  build.textContent = state.line + " " + state.version + " · build " + state.build + (when ? ", " + when : "")
    + (state.drawnBy < state.build ? " · drawing…" : "");
  document.title = "imhost · workbench · " + state.line;
  let problem = document.querySelector(".build-problem");
  if (state.problem) {
    if (!problem) { problem = element("p", "build-problem"); problem.setAttribute("role", "alert"); main.before(problem); }
    problem.textContent = state.problem;
  } else if (problem) problem.remove();
  main.querySelector(".opening")?.remove();
  if (!state.samples.length && !main.querySelector(".none")) {
    main.prepend(element("p", "none", "This line gives no samples yet: give each builder samples (MessageBuilder.samples, IMKit 1.4), build, and they show here."));
  } else if (state.samples.length) main.querySelector(".none")?.remove();
  const kept = new Map(Array.from(main.querySelectorAll("section.sample"), (section) => [section.dataset.id, section]));
  let before = main.firstElementChild;
  while (before && before.classList.contains("none")) before = before.nextElementSibling;
  for (const sample of state.samples) {
    const id = sampleID(sample);
    let section = kept.get(id);
    if (!section) section = row(main, state.chat, sample);
    kept.delete(id);
    if (section !== before) main.insertBefore(section, before); else before = before.nextElementSibling;
    fill(section, sample, main.dataset.axe !== undefined);
  }
  for (const gone of kept.values()) gone.remove();
  if (!main.querySelector("section.chat")) {
    const chat = element("section", "sample chat");
    const frame = element("iframe", "phone");
    frame.title = "The samples' chat";
    frame.src = "/chat?url=" + encodeURIComponent(state.chat) + "&in=workbench";
    chat.append(element("h2", "", "The chat (answers and new messages)"), frame);
    main.append(chat);
  }
  if (main.dataset.build && main.dataset.build !== String(state.build)) {
    for (const item of main.querySelectorAll(".findings.axe li")) { item.className = ""; item.textContent = item.textContent.replace(/:.*$/, ": checking build " + state.build + "…"); }
  }
  main.dataset.build = String(state.build);
  main.dataset.drawnBy = String(state.drawnBy);
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.getElementById("workbench");
  if (!main) return;
  const events = new EventSource("/events?workbench=1");
  events.addEventListener("workbench", (event) => show(main, JSON.parse(event.data)));
});
