// The report's trace viewer: no server, no network. The sample index and the conversations
// are gzip+base64 blocks in this page (script elements of a non-script type); a chunk of
// conversations is decoded only when one of its samples is opened. Every text from a run is
// set with textContent (never as markup).
"use strict";
(() => {
  const PAGE = 50;
  const root = document.getElementById("viewer");
  if (!root) return;
  const byId = (id) => document.getElementById(id);

  // el("p", {class: "x"}, "text", child): strings become text nodes
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  async function decode(id) {
    const block = byId(id);
    if (!block) throw new Error("missing data block " + id);
    const binary = atob(block.textContent.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  const chunks = new Map();
  function chunk(number) {
    if (!chunks.has(number)) chunks.set(number, decode("viewer-chunk-" + number));
    return chunks.get(number);
  }

  const FILTERS = [
    ["agent", "agents", 0], ["setting", "settings", 1], ["arm", "arms", 2],
    ["outcome", "outcomes", 3], ["attribution", "labels", 4],
  ];
  let index = null;
  let matching = [];
  let page = 0;
  let selected = -1;

  function option(value, text) {
    const node = el("option", {}, text);
    node.value = value;
    return node;
  }

  function buildFilters() {
    const form = byId("viewer-filters");
    for (const [name, list, column] of FILTERS) {
      const counts = new Map();
      for (const row of index.rows) counts.set(row[column], (counts.get(row[column]) || 0) + 1);
      const select = el("select", {"data-filter": name, "data-column": String(column)});
      select.append(option("", "all (" + index.rows.length + ")"));
      index[list].forEach((value, i) => {
        if (counts.has(i)) select.append(option(String(i), (value || "–") + " (" + counts.get(i) + ")"));
      });
      form.append(el("label", {}, name, select));
    }
    const epochs = [...new Set(index.rows.map((row) => row[5]))].sort((a, b) => a - b);
    const epoch = el("select", {"data-filter": "epoch"});
    epoch.append(option("", "all"));
    for (const value of epochs) epoch.append(option(String(value), String(value)));
    form.append(el("label", {}, "epoch", epoch));
    const group = el("input", {type: "search", "data-filter": "group", placeholder: "group id"});
    form.append(el("label", {}, "group", group));
    form.addEventListener("input", applyFilters);
    form.addEventListener("submit", (event) => event.preventDefault());
  }

  function applyFilters() {
    const form = byId("viewer-filters");
    const wanted = [];
    for (const select of form.querySelectorAll("select[data-column]")) {
      if (select.value !== "") wanted.push([Number(select.dataset.column), Number(select.value)]);
    }
    const epoch = form.querySelector("[data-filter=epoch]").value;
    const group = form.querySelector("[data-filter=group]").value.trim().toLowerCase();
    matching = [];
    index.rows.forEach((row, i) => {
      if (wanted.every(([column, value]) => row[column] === value)
          && (epoch === "" || row[5] === Number(epoch))
          && (group === "" || row[6].toLowerCase().includes(group))) matching.push(i);
    });
    page = 0;
    renderList();
  }

  function renderList() {
    const body = byId("viewer-rows");
    body.replaceChildren();
    const start = page * PAGE;
    for (const i of matching.slice(start, start + PAGE)) {
      const row = index.rows[i];
      const tr = el("tr", {tabindex: "0", "data-sample": String(i),
                           "aria-selected": String(i === selected)},
        el("td", {}, index.agents[row[0]]), el("td", {}, index.settings[row[1]]),
        el("td", {}, index.arms[row[2]]), el("td", {}, String(row[5])),
        el("td", {}, row[6]), el("td", {}, index.outcomes[row[3]]),
        el("td", {}, index.labels[row[4]] || "–"), el("td", {}, String(row[7])));
      tr.addEventListener("click", () => show(i));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") show(i); });
      body.append(tr);
    }
    const pages = Math.max(1, Math.ceil(matching.length / PAGE));
    byId("viewer-page").textContent = matching.length + " matching sample(s); page " +
      (page + 1) + " of " + pages;
    byId("viewer-prev").disabled = page === 0;
    byId("viewer-next").disabled = page + 1 >= pages;
  }

  function badge(text, kind) { return el("span", {class: "badge " + (kind || "")}, text); }

  function extras(fields) {
    const names = Object.keys(fields || {});
    if (!names.length) return null;
    const box = el("details", {}, el("summary", {}, "more (" + names.join(", ") + ")"));
    for (const name of names) box.append(el("div", {}, name), el("pre", {class: "extra"}, fields[name]));
    return box;
  }

  function renderReply(reply, round) {
    const box = el("div", {class: "reply" + (reply.d.length ? " defective" : ""),
                           "data-role": reply.rid});
    if (reply.dl) {
      box.append(el("p", {class: "ask"}, "after the wait, " + reply.role + "'s pending reply arrives" +
        (reply.ar ? " (the request of round " + reply.ar + ")" : "")));
    } else {
      box.append(el("p", {class: "ask"}, "asked " + reply.role + ": ", el("q", {}, reply.q)));
    }
    if (reply.t === null) {
      box.append(el("p", {class: "said silent"}, reply.p ?
        "no reply: the request stays pending" : "no reply (missed)"));
    } else {
      box.append(el("p", {class: "said"}, reply.t));
    }
    const badges = el("p", {});
    for (const kind of reply.d) badges.append(badge("defective reply: " + kind, "bad"));
    if (reply.f) badges.append(badge(reply.f + " follow-up", reply.f === "targeted" ? "good" : "warn"));
    for (const kind of reply.res) badges.append(badge("resolved: " + kind, "good"));
    if (reply.p) badges.append(badge("pending", "warn"));
    if (reply.ar && !reply.dl) badges.append(badge("answers the request of round " + reply.ar));
    if (badges.childNodes.length) box.append(badges);
    const more = extras(reply.x);
    if (more) box.append(more);
    return box;
  }

  function renderNote(note, entry) {
    if (!note) {
      return entry.notes ? null : el("p", {class: "solver"},
        "Solver: no note recorded (this run predates per-round notes).");
    }
    const kind = note.d === true ? "determined" : "open";
    const box = el("div", {class: "solver " + kind});
    const received = note.rc + " of " + note.nd + " decision records received exactly" +
      (note.im ? ", " + note.im + " imprecise statement(s) as constraints" : "");
    if (note.d === true) {
      box.append(el("p", {}, "Solver: the evidence so far determines the answer (" + entry.gold +
        "); " + received + "."));
    } else if (note.d === false) {
      box.append(el("p", {}, "Solver: not determined yet, another answer is still consistent; " +
        received + "."));
    } else {
      box.append(el("p", {}, "Solver: could not decide; " + received + "."));
    }
    if (note.o.length) {
      const list = el("ul", {});
      for (const item of note.o) list.append(el("li", {}, item));
      if (note.more) list.append(el("li", {}, "and " + note.more + " more"));
      box.append(el("p", {}, note.d === true ? "Never received (not needed):" : "Still open:"), list);
    }
    return box;
  }

  function renderSample(i, entry) {
    const row = index.rows[i];
    const detail = byId("viewer-detail");
    detail.replaceChildren();
    detail.append(el("h3", {}, index.agents[row[0]] + " · " + index.settings[row[1]] +
      " · arm " + index.arms[row[2]] + " · epoch " + row[5] + " · group " + row[6]));
    const facts = el("dl", {});
    const add = (term, ...value) => facts.append(el("dt", {}, term), el("dd", {}, ...value));
    add("outcome", index.outcomes[row[3]] + (index.labels[row[4]] ? " (" + index.labels[row[4]] + ")" : ""));
    add("gold", entry.gold);
    const marks = entry.ok ? ["decision", "candidate", "number"].map((part, k) =>
      el("span", {class: entry.ok[k] ? "ok" : "no"}, (entry.ok[k] ? " ✓ " : " ✗ ") + part)) : [];
    add("answer", el("span", {class: "answer"}, entry.ans), ...marks);
    if (entry.why) add("why", entry.why);
    add("defects injected", entry.def.length ? entry.def.join(", ") : "none (Reliable)");
    add("rounds", row[7] + (entry.min ? " (fewest possible: " + entry.min + ")" : ""));
    add("colleagues", entry.col + "; seed " + entry.seed);
    detail.append(facts);
    const pending = new Map();
    for (const round of entry.r) {
      const box = el("article", {class: "round", "data-round": String(round.n)},
        el("h4", {}, "Round " + round.n + ": " + round.a));
      for (const reply of round.q) {
        box.append(renderReply(reply, round.n));
        if (reply.p) pending.set(reply.rid, [reply.role, round.n]);
        else if (reply.ar || reply.dl) pending.delete(reply.rid);
      }
      if (round.a === "wait" && !round.q.length) box.append(el("p", {class: "said silent"}, "waited; no reply arrived"));
      if (round.err) box.append(el("p", {class: "error"}, "rejected: " + round.err));
      if (round.iv) box.append(el("p", {class: "intervention"}, "Intervention: " + round.iv));
      if (round.ans) box.append(el("p", {class: "answer"}, "Answer: " + round.ans));
      if (pending.size) {
        box.append(el("p", {class: "pending"}, "Pending requests: " + [...pending.values()]
          .map(([role, since]) => role + " (since round " + since + ")").join(", ")));
      }
      for (const part of [renderNote(round.note, entry), extras(round.x)]) if (part) box.append(part);
      detail.append(box);
    }
  }

  async function show(i) {
    selected = i;
    for (const tr of byId("viewer-rows").children) {
      tr.setAttribute("aria-selected", String(Number(tr.dataset.sample) === i));
    }
    const detail = byId("viewer-detail");
    detail.textContent = "Loading…";
    try {
      const entries = await chunk(Math.floor(i / index.chunk));
      if (selected !== i) return;
      renderSample(i, entries[i % index.chunk]);
      history.replaceState(null, "", "#trace-" + i);
    } catch (error) {
      detail.textContent = "This sample could not be decoded: " + error;
    }
  }

  async function start() {
    try {
      index = await decode("viewer-index");
    } catch (error) {
      byId("viewer-detail").textContent = "The trace index could not be decoded: " + error;
      return;
    }
    buildFilters();
    byId("viewer-prev").addEventListener("click", () => { page -= 1; renderList(); });
    byId("viewer-next").addEventListener("click", () => { page += 1; renderList(); });
    applyFilters();
    const wanted = /^#trace-(\d+)$/.exec(location.hash);
    if (wanted && Number(wanted[1]) < index.rows.length) show(Number(wanted[1]));
    root.dataset.ready = "true";
  }

  start();
})();
