// The page of a convgit session: draws the conversation tree beside the workspace track from
// the JSON embedded in the file, and shows an entry, its files and comparisons on selection.
// Everything the data holds is written with textContent: no entry text is ever read as markup.
"use strict";

(function () {
  const D = JSON.parse(document.getElementById("convgit-data").textContent);
  const STATUS = { added: "A", modified: "M", deleted: "D", typechange: "T" };
  const KIND_MASK = 0o170000;
  const GITLINK = 0o160000;
  const CONTEXT = 3; // lines of context around a change, as git diff
  const MAX_EDITS = 4000; // a comparison needing more line edits is named, not drawn

  const snapshots = new Map(D.snapshots.map((s) => [s.entry, s]));
  const restoresAt = new Map();
  for (const r of D.restores) {
    if (!restoresAt.has(r.at)) restoresAt.set(r.at, []);
    restoresAt.get(r.at).push(r);
  }
  const onPath = new Set(D.path);
  const byId = new Map(D.entries.map((e) => [e.id, e]));
  // each id as people read it (convgit's short ids, made by ShortIds); the full id stays in
  // data-entry, in links and in the address
  const shortOf = new Map(D.entries.map((e, i) => [e.id, D.short[i]]));
  const kidsOf = new Map();
  for (const e of D.entries) {
    if (!kidsOf.has(e.parentId)) kidsOf.set(e.parentId, []);
    kidsOf.get(e.parentId).push(e.id);
  }
  const rows = [];
  const rowOf = new Map();
  let selected = null;

  // -- small helpers ---------------------------------------------------------------------

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function add(parent, ...children) {
    for (const child of children) {
      parent.append(child);
    }
    return parent;
  }

  function savedId(commit) {
    return `saved:${String(commit).slice(0, 12)}`; // a saved state, as `convgit restores` names it
  }

  function shortId(id) {
    return shortOf.get(id) || String(id); // an id the page does not hold is shown whole
  }

  function files(n) {
    return n === 1 ? "1 file" : `${n} files`;
  }

  function clock(ts) {
    return typeof ts === "string" && ts.length >= 19 ? ts.slice(11, 19) : String(ts);
  }

  function link(id) {
    const a = el("a", "entry-link", shortId(id));
    a.href = "#" + encodeURIComponent(id);
    a.title = summaryOf(id);
    a.addEventListener("click", (event) => {
      event.preventDefault();
      select(id, true);
    });
    return a;
  }

  // Python's str() of a JSON value, as render.summary writes it
  function pyStr(value) {
    if (value === undefined || value === null) return "None";
    if (value === true) return "True";
    if (value === false) return "False";
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  }

  // Python's whitespace, for " ".join(text.split())
  const WORD = /[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;

  function squeeze(text, width) {
    let out = "";
    WORD.lastIndex = 0;
    let match;
    while ((match = WORD.exec(text)) !== null) {
      out += (out ? " " : "") + match[0];
      if (out.length > 2 * width + 2) break; // enough: more code points than the width
    }
    if (out.length > width) {
      const points = Array.from(out);
      if (points.length > width) out = points.slice(0, width - 1).join("") + "…";
    }
    return out;
  }

  // [head, text] of render.summary: the same words as `convgit tree`
  function summaryParts(r, width = 72) {
    let head;
    let text;
    const kind = r.type;
    if (kind === "message") {
      const content = r.content;
      if (typeof content === "string") {
        text = content;
      } else {
        const parts = (Array.isArray(content) ? content : []).filter(
          (p) => p !== null && typeof p === "object" && !Array.isArray(p),
        );
        text = parts
          .map((p) => (p.type === "text" ? pyStr(p.text === undefined ? "" : p.text) : `[${pyStr(p.type)}]`))
          .join(" ");
        const calls = parts.filter((p) => p.type === "tool_call").map((p) => pyStr(p.name));
        if (calls.length) text = (text ? text + " " : "") + "→ " + calls.join(", ");
      }
      head = pyStr(r.role);
      if (head === "tool") head = `tool[${pyStr(r.toolCallId)}]` + (r.isError ? " error" : "");
      // an agent other than the session's wrote it (a handoff)
      if (typeof r.agent === "string") head += ` (${r.agent})`;
    } else if (kind === "model") {
      head = "model";
      text = `${pyStr(r.provider)}/${pyStr(r.model)}`;
    } else if (kind === "thinking") {
      head = "thinking";
      text = pyStr(r.level);
    } else if (kind === "system") {
      head = "system prompt";
      text = r.text === null || r.text === undefined ? "(none)" : pyStr(r.text);
    } else if (kind === "compaction") {
      head = "compaction";
      text = pyStr(r.summary);
    } else if (kind === "branch_summary") {
      head = "branch summary";
      text = pyStr(r.summary);
    } else if (kind === "note") {
      head = `note (${r.source === undefined ? "convgit" : pyStr(r.source)})`;
      text = pyStr(r.text);
    } else if (kind === "custom") {
      head = `custom ${pyStr(r.kind)}`;
      text = "";
    } else {
      head = pyStr(kind);
      text = "";
    }
    return [head, squeeze(text, width)];
  }

  function summaryOf(id, width) {
    const record = byId.get(id);
    if (!record) return String(id);
    const [head, text] = summaryParts(record, width);
    return text ? `${head}: ${text}` : head;
  }

  function kindClass(r) {
    return "kind k-" + (r.type === "message" ? String(r.role) : String(r.type)).replace(/[^a-z_]/g, "");
  }

  // -- the tree ---------------------------------------------------------------------------

  function restoreWords(r) {
    const n = Object.values(r.changed || {}).reduce((sum, k) => sum + Number(k || 0), 0);
    const what = r.undo
      ? "the state before the last restore"
      : r.target
        ? `the snapshot of ${shortId(r.target)}`
        : `the saved state ${savedId(r.commit)}`;
    return `restored ${files(n)} to ${what}`;
  }

  // what a snapshot changed: the files that differ from the previous snapshot on its path
  // (its own total only for the first, where nothing came before)
  function changedWords(snap) {
    if (snap.previous === null) return `the first snapshot, ${files(snap.files)}`;
    const n = snap.changes.length;
    return n ? `${files(n)} changed` : "no file changed";
  }

  // the kind badge: a tool result's call id is long (Claude's, Codex's): the badge says "tool",
  // the id is in its title and in the entry's details
  function badge(r, kind) {
    if (r.type === "message" && r.role === "tool") {
      const by = typeof r.agent === "string" ? ` (${r.agent})` : "";
      return (r.isError ? "tool error" : "tool") + by;
    }
    return kind;
  }

  // the workspace lane of a row: its snapshot's commit, and where restores happened
  function laneText(id) {
    const parts = [];
    const snap = snapshots.get(id);
    if (snap) parts.push("◆ " + snap.commit.slice(0, 8));
    const here = restoresAt.get(id) || [];
    if (here.length) {
      const r = here[0];
      // the target by its label when it has one, as the commands take it (`restore planA`)
      const to = r.undo || !r.target ? "undo" : "to " + (D.labels[r.target] || shortId(r.target));
      parts.push("⟲ " + to + (here.length > 1 ? ` +${here.length - 1}` : ""));
    }
    return parts;
  }

  // deep forks would push an entry off the screen: past MAX_PREFIX columns, the drawing keeps
  // its last columns (the forks nearest the entry) and says how many levels it left out
  const MAX_PREFIX = 36;
  const prefixCache = new Map();

  function drawnPrefix(prefix, depth) {
    if (prefix.length <= MAX_PREFIX) return el("span", "pre", prefix);
    if (!prefixCache.has(prefix)) {
      const kept = prefix.slice(-MAX_PREFIX + 3);
      prefixCache.set(prefix, [`${depth - kept.length / 3}⋯`, kept]);
    }
    const [left, kept] = prefixCache.get(prefix);
    const node = el("span", "pre", kept);
    node.prepend(el("span", "deep", left));
    node.title = `${depth} forks deep`;
    return node;
  }

  // Every entry gets its row at once (an empty one is cheap); rows are filled in slices, the
  // first screen and the selected entry first, so a big session is usable before it is drawn.
  const BLOCK = 64; // rows per block
  const template = el("div", "row");
  add(template, el("span", "pre"), el("span", "id"), el("span"), el("span", "text"));
  add(template, el("span", "ts"), el("span", "lane"));

  function drawRows() {
    const box = document.getElementById("rows");
    const fragment = document.createDocumentFragment();
    let block = null;
    D.entries.forEach((record, i) => {
      const [, depth, head] = D.rows[i];
      const id = record.id;
      if (i % BLOCK === 0) {
        // the browser skips drawing a block off screen: a few hundred blocks to watch, not
        // ten thousand rows
        block = el("div", "block");
        fragment.append(block);
      }
      const row = document.createElement("div");
      row.className = onPath.has(id) ? "row on-path" : "row";
      row.setAttribute("role", "treeitem");
      row.dataset.entry = id;
      block.append(row);
      rows.push({ id, el: row, depth, head: Boolean(head), collapsed: false, end: i, count: null, filled: false });
      rowOf.set(id, i);
    });
    // one listener for every row: a click selects, a click on a toggle folds its branch
    box.addEventListener("click", (event) => {
      const row = event.target.closest(".row");
      if (row === null) return;
      const i = rowOf.get(row.dataset.entry);
      if (event.target.closest(".tog")) setCollapsed(i, !rows[i].collapsed);
      else select(row.dataset.entry, true);
    });
    // a branch ends before the next row that is shallower, or that starts a sibling branch
    const open = [];
    rows.forEach((item, i) => {
      while (open.length) {
        const top = rows[open[open.length - 1]];
        if (item.depth > top.depth || (item.depth === top.depth && !item.head)) break;
        top.end = i - 1;
        open.pop();
      }
      if (item.head) open.push(i);
    });
    for (const i of open) rows[i].end = rows.length - 1;
    box.append(fragment);
  }

  function fill(i) {
    const item = rows[i];
    if (item.filled) return;
    item.filled = true;
    const record = D.entries[i];
    const [prefix, depth, head] = D.rows[i];
    const id = record.id;
    const row = item.el;
    row.append(...template.cloneNode(true).childNodes);
    const [pre, ident, kindBox, words, time, lane] = row.children;
    pre.replaceWith(drawnPrefix(D.prefixes[prefix], depth));
    if (head) {
      const toggle = el("button", "tog", item.collapsed ? "▸" : "▾");
      toggle.type = "button";
      toggle.title = item.collapsed ? "expand this branch" : "collapse this branch";
      ident.before(toggle);
    }
    const [kind, text] = summaryParts(record);
    ident.textContent = shortId(id);
    ident.title = id;
    kindBox.className = kindClass(record);
    kindBox.textContent = badge(record, kind);
    kindBox.title = kind;
    words.textContent = text;
    item.text = text;
    const label = D.labels[id];
    if (label !== undefined) time.before(el("span", "label", label));
    if (id === D.filesAt) {
      const mark = el("span", "mark", "← files");
      mark.dataset.marker = "files";
      mark.title = "the files match this entry's snapshot now";
      time.before(mark);
    }
    if (id === D.leaf) {
      const mark = el("span", "mark", "← context");
      mark.dataset.marker = "context";
      mark.title = "the active leaf: the context the model will be sent ends here";
      time.before(mark);
    }
    time.textContent = clock(record.ts);
    const snap = snapshots.get(id);
    const [first, second] = laneText(id);
    if (snap) {
      lane.append(el("span", "snap", first));
      lane.title = `snapshot ${snap.commit.slice(0, 12)} of ${shortId(id)}: ${changedWords(snap)}`;
    }
    const here = restoresAt.get(id) || [];
    if (here.length) {
      const mark = el("span", "restore", (snap ? " " : "") + (snap ? second : first));
      mark.title = here.map(restoreWords).join("; ");
      lane.append(mark);
    }
  }

  // fills the rows from ``next`` on, a slice at a time between events; calls done at the end
  function fillRest(next, done) {
    const end = Math.min(rows.length, next + 400);
    for (let i = next; i < end; i++) fill(i);
    if (end < rows.length) setTimeout(() => fillRest(end, done), 0);
    else done();
  }

  function setCollapsed(i, collapsed) {
    fill(i);
    const item = rows[i];
    item.collapsed = collapsed;
    const toggle = item.el.querySelector(".tog");
    toggle.textContent = collapsed ? "▸" : "▾";
    toggle.title = collapsed ? "expand this branch" : "collapse this branch";
    const hidden = item.end - i;
    if (item.count === null) {
      item.count = el("span", "hidden-count");
      item.el.querySelector(".ts").before(item.count);
    }
    item.count.textContent = collapsed && hidden ? `(+${hidden} hidden)` : "";
    let hideUntil = -1;
    rows.forEach((r, j) => {
      const hide = j <= hideUntil;
      if (r.el.hidden !== hide) r.el.hidden = hide;
      if (!hide && r.collapsed) hideUntil = r.end;
    });
  }

  function reveal(i) {
    rows.forEach((r, j) => {
      if (r.collapsed && j < i && i <= r.end) setCollapsed(j, false);
    });
  }

  // -- comparing snapshots (what `convgit diff A B` computes, from the embedded deltas) -----

  function chain(entry) {
    const out = [];
    for (let at = entry; at !== null && at !== undefined; at = snapshots.get(at).previous) out.push(at);
    return out.reverse();
  }

  function sameSide(x, y) {
    if (x === null || y === null) return x === y;
    return x[0] === y[0] && x[1] === y[1];
  }

  function statusOf(x, y) {
    if (x === null) return "added";
    if (y === null) return "deleted";
    return (x[0] ^ y[0]) & KIND_MASK ? "typechange" : "modified";
  }

  function comparePaths(x, y) {
    // Python sorts paths by code point; JavaScript's < compares UTF-16 units
    const a = Array.from(x, (c) => c.codePointAt(0));
    const b = Array.from(y, (c) => c.codePointAt(0));
    for (let i = 0; i < a.length && i < b.length; i++) {
      if (a[i] !== b[i]) return a[i] - b[i];
    }
    return a.length - b.length;
  }

  // [{path, status, old: [mode, blob] | null, new: ...}], or null when a snapshot on the way
  // has too many files to be listed in the page
  function changesBetween(a, b) {
    const ca = chain(a);
    const cb = chain(b);
    let common = 0;
    while (common < ca.length && common < cb.length && ca[common] === cb[common]) common++;
    const seen = new Map();
    for (const [side, list] of [["a", ca.slice(common)], ["b", cb.slice(common)]]) {
      for (const entry of list) {
        const changes = snapshots.get(entry).changes;
        if (changes === null) return null;
        for (const [path, , om, oo, nm, no] of changes) {
          let t = seen.get(path);
          if (t === undefined) {
            t = { base: om ? [om, oo] : null, a: undefined, b: undefined };
            seen.set(path, t);
          }
          t[side] = nm ? [nm, no] : null;
        }
      }
    }
    const out = [];
    for (const [path, t] of seen) {
      const x = t.a === undefined ? t.base : t.a;
      const y = t.b === undefined ? t.base : t.b;
      if (!sameSide(x, y)) out.push({ path, status: statusOf(x, y), old: x, new: y });
    }
    return out.sort((p, q) => comparePaths(p.path, q.path));
  }

  // -- line diffs (Myers), for comparisons the page makes itself ------------------------------

  function lines(text) {
    if (text === "") return [];
    const out = text.split("\n");
    if (out[out.length - 1] === "") out.pop();
    return out;
  }

  function editScript(a, b) {
    let start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) start++;
    let endA = a.length;
    let endB = b.length;
    while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
      endA--;
      endB--;
    }
    const middle = myers(a.slice(start, endA), b.slice(start, endB));
    if (middle === null) return null;
    const ops = [];
    for (let i = 0; i < start; i++) ops.push([" ", a[i]]);
    ops.push(...middle);
    for (let i = endA; i < a.length; i++) ops.push([" ", a[i]]);
    return ops;
  }

  function myers(a, b) {
    const n = a.length;
    const m = b.length;
    if (n === 0) return b.map((line) => ["+", line]);
    if (m === 0) return a.map((line) => ["-", line]);
    const max = n + m;
    const v = new Int32Array(2 * max + 2);
    const trace = [];
    let found = -1;
    for (let d = 0; d <= Math.min(max, MAX_EDITS) && found < 0; d++) {
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[max + k - 1] < v[max + k + 1]) ? v[max + k + 1] : v[max + k - 1] + 1;
        let y = x - k;
        while (x < n && y < m && a[x] === b[y]) {
          x++;
          y++;
        }
        v[max + k] = x;
        if (x >= n && y >= m) {
          found = d;
          break;
        }
      }
      trace.push(v.slice(max - d, max + d + 1));
    }
    if (found < 0) return null;
    const ops = [];
    let x = n;
    let y = m;
    for (let d = found; d > 0; d--) {
      const before = trace[d - 1];
      const k = x - y;
      const at = (kk) => before[kk + d - 1];
      const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
      const prevK = down ? k + 1 : k - 1;
      const prevX = at(prevK);
      const prevY = prevX - prevK;
      while (x > prevX && y > prevY) {
        x--;
        y--;
        ops.push([" ", a[x]]);
      }
      if (down) ops.push(["+", b[--y]]);
      else ops.push(["-", a[--x]]);
    }
    while (x > 0 && y > 0) {
      x--;
      y--;
      ops.push([" ", a[x]]);
    }
    return ops.reverse();
  }

  // unified hunks, as git writes them: "@@ -a,n +b,m @@" and three lines of context
  function unified(ops) {
    const out = [];
    const changed = [];
    ops.forEach((op, i) => {
      if (op[0] !== " ") changed.push(i);
    });
    let i = 0;
    while (i < changed.length) {
      let j = i;
      while (j + 1 < changed.length && changed[j + 1] - changed[j] <= 2 * CONTEXT) j++;
      const from = Math.max(0, changed[i] - CONTEXT);
      const to = Math.min(ops.length - 1, changed[j] + CONTEXT);
      let oldLine = 1;
      let newLine = 1;
      for (let k = 0; k < from; k++) {
        if (ops[k][0] !== "+") oldLine++;
        if (ops[k][0] !== "-") newLine++;
      }
      let oldCount = 0;
      let newCount = 0;
      const body = [];
      for (let k = from; k <= to; k++) {
        const [sign, text] = ops[k];
        if (sign !== "+") oldCount++;
        if (sign !== "-") newCount++;
        body.push(sign + text);
      }
      const range = (line, count) => (count === 1 ? `${line}` : `${count ? line : line - 1},${count}`);
      out.push(`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`, ...body);
      i = j + 1;
    }
    return out;
  }

  // -- drawing diffs ---------------------------------------------------------------------------

  function patchView(text) {
    const pre = el("pre", "diff");
    const fragment = document.createDocumentFragment();
    let inHunk = false;
    for (const line of text.replace(/\n$/, "").split("\n")) {
      let cls = "meta";
      if (line.startsWith("@@")) {
        cls = "hunk";
        inHunk = true;
      } else if (line.startsWith("diff --git ")) {
        inHunk = false;
      } else if (inHunk && line.startsWith("+")) {
        cls = "add";
      } else if (inHunk && line.startsWith("-")) {
        cls = "del";
      } else if (inHunk) {
        cls = "ctx";
      }
      fragment.append(el("span", cls, line === "" ? " " : line));
    }
    pre.append(fragment);
    return pre;
  }

  function fileBox(path, status, body) {
    const box = el("div", "file");
    box.dataset.path = path;
    const name = el("div", "name");
    add(name, el("span", "st st-" + (STATUS[status] || "T"), STATUS[status] || "?"), " " + path);
    box.append(name, body);
    return box;
  }

  function why(text) {
    return el("div", "why", text);
  }

  function blobText(side) {
    if (side === null) return "";
    if (side[0] === GITLINK) return `Subproject commit ${side[1]}\n`;
    if (Object.prototype.hasOwnProperty.call(D.blobs, side[1])) return D.blobs[side[1]];
    return null;
  }

  function contentDiff(change) {
    const { old: x, new: y } = change;
    if (x !== null && y !== null && x[1] === y[1]) {
      return why(`mode ${x[0].toString(8)} → ${y[0].toString(8)}; the content is the same`);
    }
    const before = blobText(x);
    const after = blobText(y);
    if (before === null || after === null) {
      const missing = before === null ? x[1] : y[1];
      return why(`not shown: ${D.blobNotes[missing] || "not in the page"}`);
    }
    const ops = editScript(lines(before), lines(after));
    if (ops === null) return why("not shown: too many changed lines to compare in the page");
    const hunks = unified(ops);
    if (!hunks.length) return why("no line differs");
    return patchView(hunks.join("\n"));
  }

  // -- the details of one entry --------------------------------------------------------------

  function facts(pairs) {
    const dl = el("dl", "facts");
    for (const [name, value] of pairs) {
      const dd = el("dd");
      if (value instanceof Node) dd.append(value);
      else dd.textContent = value;
      add(dl, el("dt", null, name), dd);
    }
    return dl;
  }

  function span(...parts) {
    const s = el("span");
    for (const part of parts) s.append(part);
    return s;
  }

  function bodyText(text) {
    return el("pre", "body", text);
  }

  function part(what, body) {
    const box = el("div", "part");
    add(box, el("div", "what", what), body);
    return box;
  }

  function contentView(r) {
    const out = [];
    if (r.type === "message") {
      if (r.role === "tool") {
        out.push(el("p", "said", `the result of tool call ${pyStr(r.toolCallId)}${r.isError ? " (an error)" : ""}`));
      }
      const content = r.content;
      if (typeof content === "string") {
        out.push(bodyText(content));
      } else {
        for (const p of Array.isArray(content) ? content : []) {
          if (p && p.type === "text") out.push(part("text", bodyText(pyStr(p.text))));
          else if (p && p.type === "thinking") out.push(part("thinking", bodyText(pyStr(p.thinking))));
          else if (p && p.type === "tool_call") {
            const args = p.input === undefined ? "" : JSON.stringify(p.input, null, 2);
            out.push(part(`tool call ${pyStr(p.name)} (${pyStr(p.id)})`, bodyText(args)));
          } else out.push(part(pyStr(p && p.type), bodyText(JSON.stringify(p, null, 2))));
        }
      }
    } else if (r.type === "branch_summary") {
      out.push(el("p", "said", "what the branch left behind learned (the model is sent this):"));
      out.push(bodyText(pyStr(r.summary)));
    } else if (r.type === "compaction") {
      out.push(el("p", "said", "the conversation before this point, compacted:"));
      out.push(bodyText(pyStr(r.summary)));
    } else if (r.type === "note") {
      out.push(el("p", "said", `a note from ${r.source === undefined ? "convgit" : pyStr(r.source)} (the model is sent it):`));
      out.push(bodyText(pyStr(r.text)));
    } else if (r.type === "model") {
      out.push(bodyText(`${pyStr(r.provider)}/${pyStr(r.model)}`));
    } else if (r.type === "thinking") {
      out.push(bodyText(`thinking level ${pyStr(r.level)}`));
    } else if (r.type === "system") {
      out.push(el("p", "said", "the system prompt from here on (the model is sent it first):"));
      out.push(bodyText(r.text === null || r.text === undefined ? "(none)" : pyStr(r.text)));
    } else {
      out.push(bodyText(JSON.stringify(r, null, 2)));
    }
    return out;
  }

  function nearestSnapshot(id) {
    for (let at = id; at !== null && at !== undefined; at = (byId.get(at) || {}).parentId) {
      if (snapshots.has(at)) return snapshots.get(at);
    }
    return null;
  }

  function changeList(changes) {
    const ul = el("ul", "files");
    for (const c of changes) {
      const status = c.status || c[1];
      const li = el("li");
      add(li, el("span", "st st-" + (STATUS[status] || "T"), STATUS[status] || "?"), " " + (c.path || c[0]));
      ul.append(li);
    }
    return ul;
  }

  function filesView(id, box) {
    const snap = snapshots.get(id);
    if (!D.workspace) {
      box.append(el("p", "said", "No git repository: this session has no workspace track."));
      return;
    }
    if (!snap) {
      const near = nearestSnapshot(id);
      if (near) {
        box.append(span("No snapshot of its own: the files here are those of the snapshot of ", link(near.entry), "."));
      } else {
        box.append(el("p", "said", "No snapshot on this branch yet."));
      }
      return;
    }
    const head = el("p", "said");
    head.append(`◆ snapshot ${snap.commit.slice(0, 12)} of ${shortId(id)}: ${files(snap.files)} in all. `);
    box.append(head);
    if (snap.previous === null) {
      head.append("The first snapshot on this path (nothing came before it).");
      if (snap.changes !== null) box.append(changeList(snap.changes));
      else box.append(el("p", "said", "Too many files to list here (`convgit diff` lists them)."));
    } else if (!snap.changes.length) {
      head.append("The same files as the snapshot of ", link(snap.previous), " before it on its path.");
    } else {
      head.append(`${files(snap.changes.length)} changed since the snapshot of `, link(snap.previous), ", the previous on its path:");
      box.append(changeList(snap.changes));
      for (const c of snap.changes) {
        const [path, status, , , , , patch, note] = c;
        box.append(fileBox(path, status, patch ? patchView(patch) : why(note || "git shows no diff")));
      }
    }
    for (const s of snap.skipped || []) {
      box.append(el("p", "said", `skipped ${s.path}: ${s.reason}`));
    }
  }

  function restoreView(r) {
    const box = el("div", "event");
    box.append(el("div", null, `⟲ ${restoreWords(r)}`));
    const counts = Object.entries(r.changed || {}).map(([k, n]) => `${n} ${k}`).join(", ");
    if (counts) box.append(el("div", "mono", counts + (r.paths ? ` (only ${r.paths.join(", ")})` : "")));
    box.append(el("div", null, `saved the previous state as ${savedId(r.saved)}: \`convgit restore --undo\` returns`));
    if (!r.finished) {
      box.append(el("div", null, `interrupted: \`convgit restore --undo\` returns the files to the saved state ${savedId(r.saved)}`));
    }
    return box;
  }

  function compareView(id, box) {
    const others = D.entries.filter((e) => snapshots.has(e.id) && e.id !== id);
    const snap = snapshots.get(id);
    if (!snap || !others.length) {
      box.append(el("p", "said", snap ? "No other entry has a snapshot." : "Only entries with a snapshot can be compared (as `convgit diff A B`)."));
      return;
    }
    const bar = el("div", "compare");
    const choice = el("select");
    choice.id = "compare";
    choice.append(el("option", null, "compare with…"));
    choice.firstChild.value = "";
    for (const e of others) {
      const option = el("option", null, `${shortId(e.id)}${D.labels[e.id] ? " [" + D.labels[e.id] + "]" : ""}  ${summaryOf(e.id, 48)}`);
      option.value = e.id;
      choice.append(option);
    }
    const result = el("div");
    result.id = "compare-result";
    choice.addEventListener("change", () => {
      result.replaceChildren();
      if (choice.value) showComparison(id, choice.value, result);
    });
    add(bar, el("span", null, "the files of this snapshot and"), choice);
    box.append(bar, result);
  }

  function showComparison(a, b, box) {
    const label = (x) => D.labels[x] || shortId(x);
    box.append(el("div", "cmd", `$ convgit diff ${label(a)} ${label(b)}`));
    const changes = changesBetween(a, b);
    if (changes === null) {
      box.append(el("p", "said", "A snapshot on the way has too many files for this page: run `convgit diff` instead."));
      return;
    }
    if (!changes.length) {
      box.append(el("p", "said", "no changes"));
      return;
    }
    const list = changeList(changes);
    list.id = "compare-files";
    box.append(list);
    for (const c of changes) box.append(fileBox(c.path, c.status, contentDiff(c)));
  }

  function timeline(box) {
    const events = [];
    for (const s of D.snapshots) {
      events.push({ ts: s.ts, at: s.entry, cls: "snap", words: "◆ snapshot of ", tail: `: ${changedWords(s)}` });
    }
    for (const r of D.restores) {
      const tail = `; saved the previous state as ${savedId(r.saved)}`;
      events.push({ ts: r.ts, at: r.at, cls: "restore", words: `⟲ ${restoreWords(r)}, at `, tail });
    }
    events.sort((p, q) => (p.ts < q.ts ? -1 : p.ts > q.ts ? 1 : 0));
    const ul = el("ul", "timeline");
    for (const e of events) {
      const li = el("li");
      const words = el("span", e.cls, e.words);
      add(li, el("span", "ts", clock(e.ts)), " ", words);
      if (e.at) li.append(link(e.at));
      li.append(e.tail);
      ul.append(li);
    }
    if (!events.length) ul.append(el("li", null, "no snapshots and no restores"));
    box.append(ul);
  }

  // ``place``: where the row goes when it is scrolled to ("center" when the page opens on it)
  function select(id, fromUser, place = "nearest") {
    const i = rowOf.get(id);
    if (i === undefined) return;
    if (selected !== null) rows[rowOf.get(selected)].el.classList.remove("selected");
    selected = id;
    reveal(i);
    fill(i);
    const row = rows[i].el;
    row.classList.add("selected");
    row.setAttribute("aria-selected", "true");
    if (fromUser) history.replaceState(null, "", "#" + encodeURIComponent(id));
    row.scrollIntoView({ block: place });
    const r = byId.get(id);
    const box = document.getElementById("details");
    box.replaceChildren();
    box.dataset.entry = id;
    const [kind] = summaryParts(r);
    const title = el("h2");
    const ident = el("span", "id", shortId(id));
    ident.title = id;
    add(title, el("span", kindClass(r), kind), ident);
    if (D.labels[id] !== undefined) title.append(el("span", "label mono", `[${D.labels[id]}]`));
    if (id === D.filesAt) title.append(el("span", "m-files", "← files"));
    if (id === D.leaf) title.append(el("span", "m-context", "← context"));
    box.append(title);
    const kids = kidsOf.get(id) || [];
    const kidLinks = span();
    kids.forEach((k, n) => kidLinks.append(...(n ? [" ", link(k)] : [link(k)])));
    box.append(
      facts([
        ["id", id],
        ["time", String(r.ts)],
        ["parent", r.parentId ? link(r.parentId) : "none: a root"],
        ["children", kids.length ? kidLinks : "none"],
        ["context", onPath.has(id) ? "on the active path: the model is sent this entry" : "off the active path: the model is not sent it"],
      ]),
    );
    box.append(el("h3", null, "entry"), ...contentView(r));
    for (const restore of restoresAt.get(id) || []) box.append(restoreView(restore));
    box.append(el("h3", null, "files"));
    filesView(id, box);
    if (D.workspace) {
      box.append(el("h3", null, "compare"));
      compareView(id, box);
      box.append(el("h3", null, "the workspace track, in order"));
      timeline(box);
    }
  }

  function visibleRows() {
    if (query) return rows.filter((r) => r.el.classList.contains("match"));
    return rows.filter((r) => !r.el.hidden);
  }

  // -- search: text, ids, labels, file names --------------------------------------------------

  // fields that name other entries: searching an id finds that entry, not its neighbours
  const REFERENCES = new Set(["id", "parentId", "fromId", "firstKeptId", "ts", "type"]);
  let haystacks = null;
  let query = "";
  const shownInBlock = new WeakMap(); // block -> how many of its rows a search shows (-1: all)
  const ROW_HEIGHT = 22; // px, as page.css draws a row

  function strings(value, out) {
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) for (const v of value) strings(v, out);
    else if (value !== null && typeof value === "object") for (const v of Object.values(value)) strings(v, out);
    return out;
  }

  // what a search looks in: the entry's text (every string it holds, tool calls and results
  // included), its id and short id, its label, its snapshot's commit and the files it changed
  function haystack(record, i) {
    const id = record.id;
    const out = [id, D.short[i]];
    if (D.labels[id] !== undefined) out.push(D.labels[id]);
    for (const [k, v] of Object.entries(record)) if (!REFERENCES.has(k)) strings(v, out);
    const snap = snapshots.get(id);
    if (snap) {
      out.push(snap.commit);
      for (const c of snap.changes || []) out.push(c[0]);
    }
    return out.join("\n").toLowerCase();
  }

  // text with the first place it holds ``q`` marked (lower-cased lengths may differ: then none)
  function marked(node, text, q) {
    const lower = text.toLowerCase();
    const at = q && lower.length === text.length ? lower.indexOf(q) : -1;
    if (at < 0) {
      node.textContent = text;
      return;
    }
    node.replaceChildren(text.slice(0, at), el("mark", null, text.slice(at, at + q.length)), text.slice(at + q.length));
  }

  function search(wanted) {
    const q = wanted.trim().toLowerCase();
    if (q === query) return;
    const was = query;
    query = q;
    if (haystacks === null && q) haystacks = D.entries.map(haystack);
    let count = 0;
    const inBlock = new Map(); // block -> its rows that match
    rows.forEach((item, i) => {
      const hit = q !== "" && haystacks[i].includes(q);
      if (hit) {
        fill(i);
        count++;
        const block = item.el.parentElement;
        inBlock.set(block, (inBlock.get(block) || 0) + 1);
      }
      if (hit || item.el.classList.contains("match")) {
        item.el.classList.toggle("match", hit);
        marked(item.el.querySelector(".id"), shortId(item.id), hit ? q : "");
        marked(item.el.querySelector(".text"), item.text, hit ? q : "");
        const label = item.el.querySelector(".label");
        if (label !== null) marked(label, D.labels[item.id], hit ? q : "");
      }
    });
    const box = document.getElementById("rows");
    // a block off screen is not laid out: it counts as high as its matching rows (none when
    // none match), so the list is as long as what it shows. The browser would rather use the
    // height it last drew the block at: a block whose rows changed is a new element, with
    // no such memory
    for (const block of Array.from(box.children)) {
      const n = q ? inBlock.get(block) || 0 : -1;
      if (n === (shownInBlock.get(block) ?? -1)) continue;
      const fresh = el("div", "block");
      fresh.append(...block.childNodes);
      fresh.hidden = n === 0;
      if (n > 0) fresh.style.containIntrinsicSize = `${n * ROW_HEIGHT}px`;
      block.replaceWith(fresh);
      shownInBlock.set(fresh, n);
    }
    box.classList.toggle("searching", q !== "");
    document.getElementById("search-count").textContent = q ? `${count} of ${rows.length} entries` : "";
    if (was && !q && selected !== null) rows[rowOf.get(selected)].el.scrollIntoView({ block: "nearest" });
  }

  function searchKeys(event) {
    if (event.key === "Escape") {
      event.target.value = "";
      search("");
    } else if (event.key === "Enter") {
      const first = visibleRows()[0];
      if (query && first) select(first.id, true);
    }
  }

  // the entry an address names: a full id, a label, or an id prefix only one entry has (the
  // short ids the page shows are such prefixes)
  function named(name) {
    if (rowOf.has(name)) return name;
    for (const [id, label] of Object.entries(D.labels)) if (label === name && rowOf.has(id)) return id;
    if (!name) return null;
    const found = D.entries.filter((e) => e.id.startsWith(name));
    return found.length === 1 ? found[0].id : null;
  }

  function keys(event) {
    if (selected === null) return;
    const i = rowOf.get(selected);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const shown = visibleRows();
      const at = shown.indexOf(rows[i]) + (event.key === "ArrowDown" ? 1 : -1);
      if (at >= 0 && at < shown.length) select(shown[at].id, true);
      event.preventDefault();
    } else if ((event.key === "ArrowLeft" || event.key === "ArrowRight") && rows[i].head) {
      setCollapsed(i, event.key === "ArrowLeft");
      event.preventDefault();
    }
  }

  // -- start ------------------------------------------------------------------------------------

  document.getElementById("title").textContent = `session ${D.session}` + (D.name ? ` — ${D.name}` : "");
  const status = document.getElementById("status");
  for (const line of D.status) {
    status.append(el("span", line.startsWith("warning:") ? "warn" : null, line + "\n"));
  }
  document.getElementById("notes").textContent = D.notes.join(" ");
  // the id and lane columns are as wide as their widest row, so every row's columns line up
  const tracks = document.getElementById("tracks");
  tracks.style.setProperty("--id-width", `${D.short.reduce((n, s) => Math.max(n, s.length), 8)}ch`);
  let lane = 11;
  for (const id of new Set([...snapshots.keys(), ...restoresAt.keys()])) {
    const text = Array.from(laneText(id).join(" "));
    // ◆ and ⟲ come from a fallback font, wider than a monospace cell: count them as two
    lane = Math.max(lane, text.length + text.filter((c) => c === "◆" || c === "⟲").length);
  }
  tracks.style.setProperty("--lane-width", `${lane}ch`);
  drawRows();
  for (let i = 0; i < Math.min(rows.length, 200); i++) fill(i);
  document.getElementById("rows").addEventListener("keydown", keys);
  const find = document.getElementById("search");
  find.addEventListener("input", () => search(find.value));
  find.addEventListener("keydown", searchKeys);
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("input, select, textarea");
    if (event.key === "/" && !typing) {
      find.focus();
      event.preventDefault();
    }
  });
  const address = () => {
    try {
      return named(decodeURIComponent(location.hash.slice(1)));
    } catch {
      return null; // an address that is not valid percent-encoding names no entry
    }
  };
  const opening = address() || (rowOf.has(D.opens) ? D.opens : D.leaf);
  if (opening !== null) select(opening, false, "center");
  window.addEventListener("hashchange", () => {
    const id = address();
    if (id !== null) select(id, false, "center");
  });
  document.body.dataset.interactive = "1";
  fillRest(0, () => {
    document.body.dataset.ready = "1"; // every row drawn
  });
})();
