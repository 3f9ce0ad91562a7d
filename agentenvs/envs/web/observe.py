"""The agent's view of a page: a pruned accessibility tree with BrowserGym ``bid`` ids.

One script run in the page does everything (tens of milliseconds even on big
pages, where CDP's full AX tree takes seconds): it gives every element a
``bid`` attribute (kept across observations, so ids stay stable while a page
lives, and numbered in document order on a fresh load), and prints visible
elements with their ARIA role, accessible name and state, one per line,
indented by depth. Generic containers are dropped and their text lifted.
"""

from __future__ import annotations

from typing import Any

MAX_LINES = 1500

MARK_AND_DESCRIBE = r"""
(maxLines) => {
  const ROLES = {A: 'link', BUTTON: 'button', SELECT: 'combobox', OPTION: 'option', TEXTAREA: 'textbox',
    H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading', IMG: 'img',
    UL: 'list', OL: 'list', LI: 'listitem', TABLE: 'table', TR: 'row', TD: 'cell', TH: 'columnheader',
    NAV: 'navigation', MAIN: 'main', FORM: 'form', DIALOG: 'dialog', LABEL: 'LabelText', P: 'paragraph',
    HEADER: 'banner', FOOTER: 'contentinfo', ASIDE: 'complementary', ARTICLE: 'article', SECTION: 'region',
    SUMMARY: 'button', DETAILS: 'group', FIELDSET: 'group', LEGEND: 'legend', CANVAS: 'canvas', SVG: 'graphics'};
  const INPUTS = {checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button',
    search: 'searchbox', range: 'slider', number: 'spinbutton', file: 'button', image: 'button'};
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'IFRAME']);
  let next = window.__agentenvsNextBid || 0;
  const role = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(' ')[0];
    if (el.tagName === 'INPUT') {
      const t = (el.getAttribute('type') || 'text').toLowerCase();
      return t === 'hidden' ? null : (INPUTS[t] || 'textbox');
    }
    if (el.tagName === 'A') return el.hasAttribute('href') ? 'link' : null;
    return ROLES[el.tagName] || null;
  };
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  const name = (el, r) => {
    if (el.getAttribute('aria-label')) return clean(el.getAttribute('aria-label'));
    const by = el.getAttribute('aria-labelledby');
    if (by) return clean(by.split(' ').map((id) => (document.getElementById(id) || {}).textContent || '').join(' '));
    if (el.labels && el.labels.length) return clean(Array.from(el.labels).map((l) => l.textContent).join(' '));
    if (el.tagName === 'IMG') return clean(el.getAttribute('alt') || el.getAttribute('title'));
    if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)) return clean(el.value);
    if (['link', 'button', 'heading', 'option', 'tab', 'menuitem', 'cell', 'columnheader', 'LabelText', 'legend',
         'listitem', 'paragraph'].includes(r)) return clean(el.innerText || el.textContent);
    return clean(el.getAttribute('title') || el.getAttribute('placeholder'));
  };
  const visible = (el) => {
    if (el.getAttribute('aria-hidden') === 'true') return false;
    if (el.tagName === 'OPTION') return true;
    return el.checkVisibility ? el.checkVisibility({visibilityProperty: true}) : true;
  };
  const lines = [];
  const LEAF_TEXT = new Set(['link', 'button', 'heading', 'option', 'tab', 'menuitem', 'cell', 'columnheader',
    'LabelText', 'legend', 'listitem', 'paragraph', 'textbox', 'searchbox', 'combobox']);
  const walk = (node, depth, textDone) => {
    if (lines.length >= maxLines) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const t = clean(node.textContent);
      if (t && !textDone) lines.push('  '.repeat(depth) + "StaticText '" + t + "'");
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || SKIP.has(node.tagName)) return;
    const el = node;
    if (!visible(el)) return;
    const r = role(el);
    let childDepth = depth;
    let childText = textDone;
    if (r) {
      const nm = name(el, r);
      const props = [];
      if (['textbox', 'searchbox', 'spinbutton', 'slider'].includes(r) || el.tagName === 'SELECT') {
        const v = el.tagName === 'SELECT' ? (el.selectedOptions[0] ? el.selectedOptions[0].textContent : '') : el.value;
        props.push("value='" + clean(v) + "'");
      }
      if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) props.push('checked=' + el.checked);
      if (el.tagName === 'OPTION' && el.selected) props.push('selected');
      if (el.disabled) props.push('disabled');
      if (el.required) props.push('required');
      if (el.tagName === 'A' && el.getAttribute('href')) props.push("url='" + el.getAttribute('href').slice(0, 120) + "'");
      if (document.activeElement === el && el !== document.body) props.push('focused');
      lines.push('  '.repeat(depth) + '[' + el.getAttribute('bid') + '] ' + r + (nm ? " '" + nm + "'" : '')
        + (props.length ? ', ' + props.join(', ') : ''));
      childDepth = depth + 1;
      childText = textDone || (LEAF_TEXT.has(r) && nm !== '');
    }
    if (el.shadowRoot) el.shadowRoot.childNodes.forEach((c) => walk(c, childDepth, childText));
    el.childNodes.forEach((c) => walk(c, childDepth, childText));
  };
  // Every element gets a bid first, visible or not (a closed dialog's buttons keep theirs when it opens).
  const mark = (root) => root.querySelectorAll('*').forEach((el) => {
    if (!SKIP.has(el.tagName) && !el.hasAttribute('bid')) el.setAttribute('bid', String(next++));
    if (el.shadowRoot) mark(el.shadowRoot);
  });
  if (document.body) { mark(document.body); walk(document.body, 0, false); }
  window.__agentenvsNextBid = next;
  if (lines.length >= maxLines) lines.push('[... tree cut at ' + maxLines + ' lines ...]');
  return {title: document.title, lines: lines};
}
"""


def describe_page(page: Any) -> tuple[str, str]:
    """Mark the page's elements with bids and return ``(title, tree text)``."""
    result = page.evaluate(MARK_AND_DESCRIBE, MAX_LINES)
    return str(result["title"]), "\n".join(result["lines"])
