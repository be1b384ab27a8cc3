/* structrag view: the heading tree or search hits beside the pages. Plain browser JavaScript, no build step,
   no network: the data is the JSON element above, page images are files beside the HTML or data URIs. */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("structrag-data").textContent);
  const bar = document.getElementById("bar");
  const side = document.getElementById("side");
  const pagesEl = document.getElementById("pages");
  const LEVEL_COLORS = ["--l1", "--l2", "--l3", "--l4", "--l5", "--l6", "--l7"];
  const MAX_LEVEL = 9;
  const CUT = D.text_chars || 80; // the payload carries this many characters of each line

  function color(level) {
    return "var(" + LEVEL_COLORS[Math.min(Math.max(level, 1), LEVEL_COLORS.length) - 1] + ")";
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of kids) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  // --- pages: fixed aspect ratio (layout never jumps), images set when near the viewport ---------------
  const pageDivs = new Map();
  const lazy = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      const img = e.target.querySelector("img");
      if (img && !img.getAttribute("src")) img.setAttribute("src", img.dataset.src);
      lazy.unobserve(e.target);
    }
  }, { root: pagesEl, rootMargin: "1200px 0px" });

  function imageOf(doc, page) {
    const im = D.images[doc];
    return Array.isArray(im) ? im[page] : im[String(page)];
  }

  function pageKey(doc, page) { return doc + "\u0000" + page; }

  function makePage(doc, page, label) {
    const key = pageKey(doc, page);
    if (pageDivs.has(key)) return pageDivs.get(key);
    const [w, h] = D.docs[doc].sizes[page];
    const div = el("div", { class: "page", id: "page-" + pageDivs.size, "data-doc": doc, "data-page": page });
    div.style.aspectRatio = w + " / " + h;
    const img = el("img", { alt: "page " + (page + 1), draggable: "false", loading: "lazy" });
    img.dataset.src = imageOf(doc, page) || "";
    div.append(img, el("div", { class: "plabel", text: label || "p. " + (page + 1) }));
    pagesEl.append(div);
    pageDivs.set(key, div);
    lazy.observe(div);
    return div;
  }

  function placeBox(doc, page, bbox, cls) {
    const div = pageDivs.get(pageKey(doc, page));
    if (!div || !bbox) return null;
    const [w, h] = D.docs[doc].sizes[page];
    const b = el("div", { class: "box " + (cls || "") });
    b.style.left = (100 * bbox[0] / w) + "%";
    b.style.top = (100 * bbox[1] / h) + "%";
    b.style.width = Math.max(0.3, 100 * (bbox[2] - bbox[0]) / w) + "%";
    b.style.height = Math.max(0.3, 100 * (bbox[3] - bbox[1]) / h) + "%";
    div.append(b);
    return b;
  }

  function flash(box) {
    box.classList.remove("hl");
    void box.offsetWidth; // restart the animation on a second click
    box.classList.add("hl");
  }

  function status(text) {
    const s = bar.querySelector(".status");
    if (s) s.textContent = text;
  }

  function pointOnPage(div, ev) {
    const r = div.getBoundingClientRect();
    const [w, h] = D.docs[div.dataset.doc].sizes[+div.dataset.page];
    return [(ev.clientX - r.left) / r.width * w, (ev.clientY - r.top) / r.height * h];
  }

  // ====================================================================================================
  // the heading tree, with corrections
  function treeMode() {
    const name = D.document.name;
    const H = D.headings.map((h) => Object.assign({}, h, { orig: h.level, deleted: false, added: false }));
    const collapsed = new Set();
    const boxes = new Map();
    const rows = new Map();
    let selected = null;
    let adding = false;
    let added = 0;

    // bar
    const legend = el("span", { class: "legend", title: "box colour per level" });
    for (let lv = 1; lv <= 6; lv++) {
      const s = el("span", { text: "L" + lv });
      s.style.background = color(lv);
      legend.append(s);
    }
    const count = el("span", { class: "count" });
    const addBtn = el("button", { id: "mark-line", title: "click a line on a page to make it a heading", text: "Mark a line" });
    const exportBtn = el("button", { id: "export", title: "download the corrections file", text: "Export" });
    bar.append(el("span", { class: "title", text: name }), count, legend, addBtn, exportBtn, el("span", { class: "status" }));

    // filters
    const sources = Array.from(new Set(H.map((h) => h.source))).sort();
    const srcSel = el("select", { id: "filter-source", title: "show one source only" },
      el("option", { value: "", text: "all sources" }), ...sources.map((s) => el("option", { value: s, text: s })));
    // only layout detection scores its headings; outline and contents entries are taken as given
    const scored = H.filter((h) => h.source === "layout" && h.score !== null).map((h) => h.score).sort((a, b) => a - b);
    const lowDefault = scored.length ? scored[Math.floor(scored.length / 4)] : 1;
    const lowChk = el("input", { type: "checkbox", id: "filter-low" });
    const lowThr = el("input", { type: "number", id: "filter-threshold", step: "0.1", value: String(lowDefault) });
    side.append(el("div", { class: "tools" },
      srcSel,
      el("label", { title: "show only layout-detected headings scored below the threshold (by default: the lowest quarter)" },
        lowChk, "low score <", lowThr),
      el("button", { onclick: () => { collapsed.clear(); render(); }, text: "expand all" }),
      el("button", { onclick: () => { H.forEach((h) => collapsed.add(h.id)); render(); }, text: "collapse all" })));
    const treeRoot = el("ul", { class: "tree", id: "tree" });
    side.append(treeRoot);
    for (const c of [srcSel, lowChk, lowThr]) c.addEventListener("input", render);

    for (let p = 0; p < D.document.pages; p++) makePage(name, p);

    function matches(h) {
      if (srcSel.value && h.source !== srcSel.value) return false;
      if (lowChk.checked) return h.source === "layout" && h.score !== null && h.score < parseFloat(lowThr.value);
      return true;
    }

    function filtering() { return Boolean(srcSel.value) || lowChk.checked; }

    function hoverText(h) {
      const lines = [h.text, "level " + h.level + (h.level_source ? " from " + h.level_source : "") +
        (h.confidence !== null && h.confidence !== undefined ? " (confidence " + h.confidence + ")" : ""),
        "source: " + h.source + (h.score !== null ? ", score " + h.score : "")];
      if (h.reasons && h.reasons.length) lines.push("kept because: " + h.reasons.join("; "));
      if (h.orig !== null && h.level !== h.orig) lines.push("level changed by hand (was " + h.orig + ")");
      return lines.join("\n");
    }

    // parent of each heading by the tree's rule: the most recent heading of a smaller level
    function structure() {
      const kids = new Map([[null, []]]);
      const stack = [];
      for (const h of H) {
        kids.set(h.id, []);
        while (stack.length && stack[stack.length - 1].level >= h.level) stack.pop();
        const parent = stack.length ? stack[stack.length - 1].id : null;
        kids.get(parent).push(h);
        if (!h.deleted) stack.push(h);
      }
      return kids;
    }

    function row(h, hasKids) {
      const lvSel = el("select", { class: "setlv", title: "change the level", onclick: (e) => e.stopPropagation(),
        onchange: (e) => setLevel(h.id, parseInt(e.target.value, 10)) });
      for (let lv = 1; lv <= MAX_LEVEL; lv++) lvSel.append(el("option", { value: lv, text: "L" + lv, selected: lv === h.level }));
      const lvBadge = el("span", { class: "lv", text: "L" + h.level });
      lvBadge.style.background = color(h.level);
      const meta = el("span", { class: "meta" }, "p. " + (h.page + 1) + " · ",
        el("span", { class: "src src-" + h.source, text: h.source }),
        h.score !== null ? " · " + h.score.toFixed(2) : "");
      return el("div", { class: "row", title: hoverText(h), onclick: () => select(h.id, "tree") },
        el("span", { class: "caret", text: hasKids ? (collapsed.has(h.id) ? "\u25b8" : "\u25be") : "\u00b7",
          onclick: (e) => { e.stopPropagation(); toggle(h.id); } }),
        lvBadge, el("span", { class: "t", text: h.text }), meta, lvSel,
        el("button", { class: "del", title: h.deleted ? "restore" : "delete this heading", text: h.deleted ? "\u21ba" : "\u2715",
          onclick: (e) => { e.stopPropagation(); remove(h.id); } }));
    }

    function render() {
      const kids = structure();
      const filt = filtering();
      rows.clear();
      function build(parentId) {
        const ul = el("ul", { class: "tree" });
        let any = false;
        for (const h of kids.get(parentId)) {
          const sub = build(h.id);
          const hit = matches(h);
          const li = el("li", { class: "node", "data-id": h.id }, row(h, kids.get(h.id).length > 0));
          if (h.deleted) li.classList.add("deleted");
          if (h.id === selected) li.classList.add("sel");
          if (sub.ul.childElementCount) li.append(sub.ul);
          if (filt) {
            if (!hit && !sub.any) li.classList.add("hidden");
            else if (!hit) li.classList.add("ctx");
          } else if (collapsed.has(h.id)) li.classList.add("collapsed");
          any = any || hit || sub.any;
          rows.set(h.id, li);
          ul.append(li);
        }
        return { ul, any };
      }
      treeRoot.replaceChildren(...build(null).ul.children);
      drawBoxes();
      const live = H.filter((h) => !h.deleted).length;
      const n = corrections().corrections.length;
      count.textContent = live + " headings" + (n ? ", " + n + " correction" + (n > 1 ? "s" : "") : "");
    }

    function drawBoxes() {
      for (const b of boxes.values()) b.remove();
      boxes.clear();
      for (const h of H) {
        const b = placeBox(name, h.page, h.bbox, "hbox" + (h.deleted ? " deleted" : "") + (matches(h) ? "" : " dim"));
        if (!b) continue;
        b.style.setProperty("--c", h.deleted ? "#999" : color(h.level));
        b.dataset.id = h.id;
        b.title = hoverText(h);
        b.addEventListener("click", (e) => { if (!adding) { e.stopPropagation(); select(h.id, "page"); } });
        if (h.id === selected) b.classList.add("hl");
        boxes.set(h.id, b);
      }
    }

    function toggle(id) {
      if (collapsed.has(id)) collapsed.delete(id); else collapsed.add(id);
      render();
    }

    function select(id, from) {
      selected = id;
      for (const li of treeRoot.querySelectorAll("li.sel")) li.classList.remove("sel");
      for (const b of pagesEl.querySelectorAll(".box.hl")) b.classList.remove("hl");
      const li = rows.get(id);
      const h = H.find((x) => x.id === id);
      if (!h) return;
      if (from === "page" && li) {
        // reveal the node: open its collapsed ancestors
        let changed = false;
        for (let p = li.parentElement.closest("li.node"); p; p = p.parentElement.closest("li.node")) {
          if (collapsed.delete(p.dataset.id)) changed = true;
        }
        if (changed) render();
        const li2 = rows.get(id);
        li2.classList.add("sel");
        li2.scrollIntoView({ block: "nearest" });
      } else if (li) {
        li.classList.add("sel");
      }
      const box = boxes.get(id);
      if (box) {
        if (from !== "page") box.scrollIntoView({ block: "center" });
        flash(box);
      } else {
        pageDivs.get(pageKey(name, h.page)).scrollIntoView({ block: "start" });
      }
    }

    function setLevel(id, level) {
      const h = H.find((x) => x.id === id);
      h.level = level;
      selected = id;
      render();
      status("level of \u201c" + h.text.slice(0, 40) + "\u201d set to " + level);
    }

    function remove(id) {
      const i = H.findIndex((x) => x.id === id);
      const h = H[i];
      if (h.added) H.splice(i, 1); else h.deleted = !h.deleted;
      render();
      status((h.deleted || h.added ? "deleted \u201c" : "restored \u201c") + h.text.slice(0, 40) + "\u201d");
    }

    // --- marking a line (a text block of the page) as a heading -----------------------------------------
    const hover = el("div", { class: "hover-block" });
    let picker = null;

    function blockAt(page, x, y) {
      let best = null;
      for (const b of D.blocks[page] || []) {
        if (x >= b[0] - 2 && x <= b[2] + 2 && y >= b[1] - 2 && y <= b[3] + 2) {
          const area = (b[2] - b[0]) * (b[3] - b[1]);
          if (!best || area < best.area) best = { b, area };
        }
      }
      return best && best.b;
    }

    function showAt(target, div, b) {
      const [w, h] = D.docs[name].sizes[+div.dataset.page];
      target.style.left = (100 * b[0] / w) + "%";
      target.style.top = (100 * b[1] / h) + "%";
      if (target === hover) {
        target.style.width = (100 * (b[2] - b[0]) / w) + "%";
        target.style.height = (100 * (b[3] - b[1]) / h) + "%";
      } else {
        target.style.top = (100 * b[3] / h) + "%";
      }
      div.append(target);
    }

    function closePicker() { if (picker) { picker.remove(); picker = null; } }

    addBtn.addEventListener("click", () => {
      adding = !adding;
      addBtn.classList.toggle("on", adding);
      pagesEl.classList.toggle("adding", adding);
      if (!adding) { hover.remove(); closePicker(); }
      status(adding ? "click a line on a page to make it a heading" : "");
    });
    pagesEl.addEventListener("mousemove", (ev) => {
      if (!adding || picker) return;
      const div = ev.target.closest(".page");
      if (!div) { hover.remove(); return; }
      const [x, y] = pointOnPage(div, ev);
      const b = blockAt(+div.dataset.page, x, y);
      if (b) showAt(hover, div, b); else hover.remove();
    });
    pagesEl.addEventListener("click", (ev) => {
      if (!adding || ev.target.closest(".picker")) return;
      const div = ev.target.closest(".page");
      if (!div) return;
      const page = +div.dataset.page;
      const [x, y] = pointOnPage(div, ev);
      const b = blockAt(page, x, y);
      closePicker();
      if (!b) { status("no text line there"); return; }
      showAt(hover, div, b);
      picker = el("div", { class: "picker" }, el("div", { class: "ptext", text: "\u201c" + b[4] + (b[4].length >= CUT ? "\u2026" : "") + "\u201d as a heading of level:" }));
      for (let lv = 1; lv <= 6; lv++) {
        const btn = el("button", { class: "pick-level", "data-level": lv, text: "L" + lv,
          onclick: () => { closePicker(); hover.remove(); mark(page, b, lv); } });
        btn.style.borderColor = color(lv);
        picker.append(btn);
      }
      picker.append(el("button", { text: "cancel", onclick: () => { closePicker(); hover.remove(); } }));
      showAt(picker, div, b);
    });

    function mark(page, b, level) {
      const bbox = b.slice(0, 4);
      const same = H.find((h) => !h.deleted && h.page === page && h.block === b[5]);
      if (same) { setLevel(same.id, level); select(same.id, "page"); return; }
      const h = { id: "m" + (++added), text: b[4], level: level, orig: null, page: page, bbox: bbox, block: b[5],
        source: "manual", score: null, reasons: ["marked by hand"], level_source: "manual", confidence: null,
        deleted: false, added: true };
      // after the last heading that starts at or before the block: the order structrag's file applies
      let at = 0;
      H.forEach((o, i) => { if (o.block <= b[5]) at = i + 1; });
      H.splice(at, 0, h);
      selected = h.id;
      render();
      select(h.id, "page");
      status("marked \u201c" + h.text.slice(0, 40) + "\u201d as level " + level);
    }

    // --- export -----------------------------------------------------------------------------------------
    function corrections() {
      const ops = [];
      for (const h of H) {
        const at = { page: h.page + 1, text: h.text, bbox: h.bbox };
        if (h.added) ops.push(Object.assign({ op: "add" }, at, { level: h.level }));
        else if (h.deleted) ops.push(Object.assign({ op: "delete" }, at));
        else if (h.level !== h.orig) ops.push(Object.assign({ op: "level" }, at, { level: h.level }));
      }
      return {
        format: D.format, schema_version: D.schema_version, document: D.document, settings: D.settings,
        exported: new Date().toISOString(), corrections: ops,
        headings: H.filter((h) => !h.deleted).map((h) => ({ text: h.text, page: h.page + 1, bbox: h.bbox, level: h.level, source: h.source })),
      };
    }

    exportBtn.addEventListener("click", () => {
      const data = corrections();
      const blob = new Blob([JSON.stringify(data, null, 2) + "\n"], { type: "application/json" });
      const a = el("a", { href: URL.createObjectURL(blob), download: name.replace(/\.pdf$/i, "") + ".corrections.json" });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      status("exported " + data.corrections.length + " corrections");
    });

    render();
    window.structragView = { corrections, select: (id) => select(id, "tree"), headings: () => H.map((h) => Object.assign({}, h)) };
  }

  // ====================================================================================================
  // search hits on their pages
  function hitsMode() {
    const hitBoxes = new Map();
    const items = new Map();
    let selected = null;
    const nq = D.queries.length;
    bar.append(el("span", { class: "title", text: "search hits" }),
      el("span", { class: "count", text: nq + (nq === 1 ? " query" : " queries") }), el("span", { class: "status" }));
    D.queries.forEach((q, qi) => {
      // pages in the order the hits name them, then the expected ones
      q.hits.forEach((h) => { for (const p of h.pages.length ? h.pages : h.boxes.map((b) => b[0])) makePage(h.doc, p, h.doc + " p. " + (p + 1)); });
      for (const e of q.expected) {
        if (!D.docs[e.doc] || e.page >= D.docs[e.doc].sizes.length) continue;
        const div = makePage(e.doc, e.page, e.doc + " p. " + (e.page + 1) + " \u00b7 relevant");
        div.classList.add("expected");
        div.querySelector(".plabel").textContent = e.doc + " p. " + (e.page + 1) + " \u00b7 relevant";
      }
      const box = el("div", { class: "query", "data-query": qi }, el("h2", { text: q.query }));
      if (q.note) box.append(el("div", { class: "note", text: q.note }));
      for (const e of q.expected) {
        box.append(el("div", { class: "exp", text: "relevant: " + e.doc + " p. " + (e.page + 1),
          onclick: () => { const d = pageDivs.get(pageKey(e.doc, e.page)); if (d) d.scrollIntoView({ block: "start" }); } }));
      }
      const ol = el("ol", { class: "hits" });
      q.hits.forEach((h, i) => {
        const id = qi + ":" + i;
        const pages = h.pages.length ? h.pages : Array.from(new Set(h.boxes.map((b) => b[0])));
        const plabel = pages.length ? (pages.length > 1 ? "pp. " + (pages[0] + 1) + "\u2013" + (pages[pages.length - 1] + 1) : "p. " + (pages[0] + 1)) : "";
        const li = el("li", { class: "hit" + (h.relevant === true ? " rel" : h.relevant === false ? " notrel" : ""), "data-hit": id,
          onclick: () => select(id, "list") },
          el("div", { class: "head", text: h.doc + (h.label ? " [" + h.label + "]" : "") + " \u00b7 " + plabel + " \u00b7 score " + h.score.toFixed(3) }),
          el("div", { class: "crumb", text: h.section_path.length ? h.section_path.join(" \u203a ") : "(before the first heading)" }),
          el("div", { class: "snip", text: h.text.length > 280 ? h.text.slice(0, 280) + "\u2026" : h.text }));
        ol.append(li);
        items.set(id, li);
        const bs = [];
        for (const [p, bbox] of h.boxes) {
          const b = placeBox(h.doc, p, bbox, "cbox");
          if (!b) continue;
          b.style.setProperty("--c", color(Math.min(i + 1, 7)));
          b.dataset.hit = id;
          b.append(el("span", { class: "tag", text: "#" + (i + 1) + (nq > 1 ? " q" + (qi + 1) : "") }));
          b.addEventListener("click", () => select(id, "page"));
          bs.push(b);
        }
        hitBoxes.set(id, { boxes: bs, doc: h.doc, page: pages[0] });
      });
      box.append(ol);
      side.append(box);
    });

    function select(id, from) {
      if (selected) items.get(selected).classList.remove("sel");
      for (const b of pagesEl.querySelectorAll(".box.hl")) b.classList.remove("hl");
      selected = id;
      const li = items.get(id);
      li.classList.add("sel");
      if (from === "page") li.scrollIntoView({ block: "nearest" });
      const hb = hitBoxes.get(id);
      if (hb.boxes.length) {
        if (from !== "page") hb.boxes[0].scrollIntoView({ block: "center" });
        hb.boxes.forEach(flash);
      } else if (hb.page !== undefined) {
        pageDivs.get(pageKey(hb.doc, hb.page)).scrollIntoView({ block: "start" });
      }
    }
    window.structragView = { select: (id) => select(id, "list") };
  }

  if (D.mode === "hits") hitsMode(); else treeMode();
  document.documentElement.dataset.ready = "1";
})();
