(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("torchmatrix-data").textContent);
  var panel = document.getElementById("details");
  var selected = null;
  // What a result file holds is shown as text, never as markup; escape sequences and unsafe characters go too,
  // as the Python side's report_lines does (torchmatrix.util.safetext), by the patterns that the data carries.
  var escapeSequence = new RegExp(data.text.escapeSequence, "g");
  var unsafe = new RegExp(data.text.unsafe, "gu");
  function clean(text) {
    return String(text).replace(/\r\n?/g, "\n").replace(escapeSequence, "").replace(unsafe, "\ufffd");
  }
  function node(tag, text, className) {
    var element = document.createElement(tag);
    if (text !== undefined && text !== null) { element.textContent = clean(text); }
    if (className) { element.className = className; }
    return element;
  }
  // Numbers to 4 significant digits (the stored files keep them whole); lists item by item.
  function show(value) {
    if (typeof value === "string") { return value; }
    if (typeof value === "number") {
      if (Number.isInteger(value)) { return String(value); }
      var size = Math.abs(value);
      return size !== 0 && (size < 1e-3 || size >= 1e6) ? value.toExponential(3) : String(Number(value.toPrecision(4)));
    }
    if (Array.isArray(value)) { return "[" + value.map(show).join(", ") + "]"; }
    return JSON.stringify(value);
  }
  function pairs(object) {
    var list = node("dl");
    Object.keys(object).forEach(function (key) {
      list.appendChild(node("dt", key));
      list.appendChild(node("dd", show(object[key])));
    });
    return list;
  }
  function checksTable(checks) {
    var keys = ["name", "observed", "expected", "error", "tolerance", "ok"];  // what every probe records, first
    checks.forEach(function (check) {
      Object.keys(check).forEach(function (key) { if (keys.indexOf(key) < 0) { keys.push(key); } });
    });
    var table = node("table"), head = table.insertRow();
    keys.forEach(function (key) { head.appendChild(node("th", key)); });
    checks.forEach(function (check) {
      var row = table.insertRow();
      if (check.ok === false) { row.className = "bad"; }
      keys.forEach(function (key) { row.appendChild(node("td", key in check ? show(check[key]) : "")); });
    });
    return table;
  }
  function open(index) {
    var entry = data.entries[index];
    if (!entry) { return; }
    var cell = data.cells[entry.cell], body = document.getElementById("details-body");
    body.textContent = "";
    document.getElementById("details-title").textContent =
      clean(entry.probe + " · torch " + cell.torch + " · " + cell.machine + " · " + entry.device);
    var mark = data.marks[entry.mark];
    body.appendChild(node("p", mark.symbol + " " + entry.mark + ": " + mark.meaning, "o-" + entry.mark));
    if (entry.note) { body.appendChild(node("p", "Note " + entry.note + ": " + data.notes[entry.note - 1])); }
    var facts = {"python": cell.python, "session": cell.session, "cell": cell.cell_id, "finished": cell.finished_at};
    if (entry.duration !== null) { facts.seconds = entry.duration; }
    body.appendChild(pairs(facts));
    if (entry.message) { body.appendChild(node("h3", "Message")); body.appendChild(node("pre", entry.message)); }
    var metrics = entry.metrics || {}, rest = {};
    if (Array.isArray(metrics.checks)) {
      body.appendChild(node("h3", "Checks"));
      var checks = metrics.checks.filter(function (check) { return check && typeof check === "object"; });
      body.appendChild(checksTable(checks));
    }
    Object.keys(metrics).forEach(function (key) { if (key !== "checks") { rest[key] = metrics[key]; } });
    if (Object.keys(rest).length) { body.appendChild(node("h3", "Metrics")); body.appendChild(pairs(rest)); }
    body.appendChild(node("h3", "Environment"));
    body.appendChild(Object.keys(cell.environment).length ? pairs(cell.environment) : node("p", "not recorded"));
    if (selected) { selected.classList.remove("selected"); }
    selected = document.querySelector('[data-i="' + index + '"]');
    if (selected) { selected.classList.add("selected"); }
    panel.hidden = false;
    state.cell = String(index);
    save();
  }
  function close() {
    panel.hidden = true;
    if (selected) { selected.classList.remove("selected"); selected.focus(); selected = null; }
    delete state.cell;
    save();
  }
  // The filters: a hidden probe hides its section, a hidden device or machine hides its columns.
  var state = {};
  function hiddenSet() {
    var hidden = {};
    document.querySelectorAll("#filters input").forEach(function (box) {
      if (!box.checked) { hidden[box.dataset.kind + ":" + box.value] = true; }
    });
    return hidden;
  }
  function apply() {
    var hidden = hiddenSet();
    document.querySelectorAll("section.probe").forEach(function (section) {
      section.hidden = !!hidden["probe:" + section.dataset.probe];
    });
    document.querySelectorAll("[data-device]").forEach(function (element) {  // table columns and chart series
      var off = !!(hidden["device:" + element.dataset.device] || hidden["machine:" + element.dataset.machine]);
      element.toggleAttribute("hidden", off);  // an attribute, not .hidden: SVG elements have no such property
    });
    var names = Object.keys(hidden);
    if (names.length) { state.hide = names; } else { delete state.hide; }
    save();
  }
  // The address holds each value whole (a name may hold a comma): a list's items joined by commas, each encoded.
  function save() {
    var parts = Object.keys(state).sort().map(function (key) {
      return key + "=" + [].concat(state[key]).map(encodeURIComponent).join(",");
    });
    try {
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
    } catch (error) { /* some browsers refuse this for a page opened from a file; the view still works */ }
  }
  // The checks across releases: rows filtered by name (a regular expression, or plain text where it is none)
  // and, if asked, to those that changed; one filter for every probe's, kept in the address.
  function matcher(text) {
    if (!text) { return function () { return true; }; }
    try {
      var pattern = new RegExp(text, "i");
      return function (name) { return pattern.test(name); };
    } catch (error) {
      var wanted = text.toLowerCase();
      return function (name) { return name.toLowerCase().indexOf(wanted) >= 0; };
    }
  }
  function filterChecks() {
    var matches = matcher(state.check || ""), changedOnly = state.changed === "1";
    document.querySelectorAll(".history").forEach(function (history) {
      var rows = history.querySelectorAll("tbody tr"), shown = 0;
      rows.forEach(function (row) {
        var visible = matches(row.dataset.check) && (!changedOnly || row.dataset.changed === "1");
        row.hidden = !visible;
        if (visible) { shown += 1; }
      });
      history.querySelector(".history-filter").value = state.check || "";
      history.querySelector(".history-changed").checked = changedOnly;
      history.querySelector(".history-count").textContent = shown + " of " + rows.length + " checks shown";
    });
  }
  function setCheckFilter(key, value) {
    if (value) { state[key] = value; } else { delete state[key]; }
    filterChecks();
    save();
  }
  document.querySelectorAll(".history-filters").forEach(function (filters) {
    filters.hidden = false;
    var search = filters.querySelector(".history-filter"), changed = filters.querySelector(".history-changed");
    search.addEventListener("input", function () { setCheckFilter("check", search.value); });
    changed.addEventListener("change", function () { setCheckFilter("changed", changed.checked ? "1" : ""); });
  });
  function decoded(text) {
    try { return decodeURIComponent(text); } catch (error) { return text; }  // an address edited by hand
  }
  function load() {
    var wanted = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) { wanted[part.slice(0, at)] = part.slice(at + 1).split(",").map(decoded); }
    });
    var hide = {};
    (wanted.hide || []).forEach(function (name) { hide[name] = true; });
    document.querySelectorAll("#filters input").forEach(function (box) {
      box.checked = !hide[box.dataset.kind + ":" + box.value];
    });
    ["check", "changed"].forEach(function (key) { if (wanted[key]) { state[key] = wanted[key].join(","); } });
    apply();
    filterChecks();
    if (wanted.cell) { open(Number(wanted.cell[0])); }
  }
  document.getElementById("filters").hidden = false;
  document.getElementById("filters").addEventListener("change", apply);
  document.addEventListener("click", function (event) {
    var cell = event.target.closest("[data-i]");
    if (cell) { open(Number(cell.dataset.i)); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden) { close(); return; }
    var cell = event.target.closest && event.target.closest("[data-i]");
    if (cell && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); open(Number(cell.dataset.i)); }
  });
  document.getElementById("details-close").addEventListener("click", close);
  load();
})();
