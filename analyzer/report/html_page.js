// File: analyzer/report/html_page.js - the helpers every numtrace page's
// script shares (html_template.html, cross_rank_template.html), put in at
// build time at each script's helper marker (analyzer/report/CMakeLists.txt).
const $ = (id) => document.getElementById(id);
// Every trace string goes through el(): text only, never markup.
function el(tag, text, cls, title) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  if (title) e.title = title;
  return e;
}
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
