"""Scripted solutions for MiniWoB++ tasks, run on the live (bid-marked) page.

Each solver reads the task's utterance and the page as an agent would, and
returns BrowserGym steps for the reference solution and for a plausible
mistake (the wrong button, a form left unsubmitted, a wrong value).
"""

from __future__ import annotations

_HELPERS = r"""
const bid = (el) => el ? el.getAttribute('bid') : null;
const q = (s) => document.querySelector(s);
const quoted = (u) => { const m = u.match(/"([^"]*)"/g) || []; return m.map((x) => x.slice(1, -1)); };
const byText = (root, sel, text) => Array.from(root.querySelectorAll(sel)).filter(
  (e) => e.textContent.trim() === text && e.offsetParent !== null);
"""


def _solver(body: str) -> str:
    return "(u) => {" + _HELPERS + body + "}"


SOLVERS: dict[str, str] = {
    "click-button": _solver("""
      const want = quoted(u)[0];
      const buttons = Array.from(q('#area').querySelectorAll('button'));
      const right = buttons.find((b) => b.textContent.trim() === want);
      const wrong = buttons.find((b) => b.textContent.trim() !== want);
      return {oracle: [['click', bid(right)]], wrong: wrong ? [['click', bid(wrong)]] : [['noop']]};"""),
    "click-link": _solver("""
      const want = quoted(u)[0];
      const links = byText(q('#area'), 'span, a', want);
      const other = Array.from(q('#area').querySelectorAll('span, a')).find((e) => e.textContent.trim() !== want
        && e.children.length === 0 && e.textContent.trim() !== '');
      return {oracle: [['click', bid(links[links.length - 1])]], wrong: other ? [['click', bid(other)]] : [['noop']]};"""),
    "click-checkboxes": _solver("""
      const body = u.replace(/^Select /, '').replace(/ and click Submit\\.$/, '');
      const names = body === 'nothing' ? [] : body.split(', ');
      const steps = [];
      const wrong = [];
      q('#boxes').querySelectorAll('label').forEach((l) => {
        const box = l.querySelector('input');
        if (names.includes(l.textContent.trim())) { steps.push(['check', bid(box)]); }
        else { wrong.push(['check', bid(box)]); }
      });
      return {oracle: [...steps, ['click', bid(q('#subbtn'))]], wrong: [...wrong, ['click', bid(q('#subbtn'))]]};"""),
    "click-option": _solver("""
      const name = u.replace(/^Select /, '').replace(/ and click Submit\\.$/, '');
      const labels = Array.from(q('#boxes').querySelectorAll('label'));
      const right = labels.find((l) => l.textContent.trim() === name).querySelector('input');
      const other = labels.find((l) => l.textContent.trim() !== name);
      return {oracle: [['click', bid(right)], ['click', bid(q('#subbtn'))]],
              wrong: [['click', bid(other ? other.querySelector('input') : right)], ['click', bid(q('#subbtn'))]]};"""),
    "enter-text": _solver("""
      const text = quoted(u)[0];
      return {oracle: [['fill', bid(q('#tt')), text], ['click', bid(q('#subbtn'))]],
              wrong: [['fill', bid(q('#tt')), text.slice(0, -1)], ['click', bid(q('#subbtn'))]]};"""),
    "enter-text-2": _solver("""
      const text = quoted(u)[0];
      const want = u.includes('upper case') ? text.toUpperCase() : text.toLowerCase();
      return {oracle: [['fill', bid(q('#tt')), want], ['click', bid(q('#subbtn'))]],
              wrong: [['fill', bid(q('#tt')), text], ['click', bid(q('#subbtn'))]]};"""),
    "enter-password": _solver("""
      const pw = quoted(u)[0];
      return {oracle: [['fill', bid(q('#password')), pw], ['fill', bid(q('#verify')), pw], ['click', bid(q('#subbtn'))]],
              wrong: [['fill', bid(q('#password')), pw], ['click', bid(q('#subbtn'))]]};"""),
    "login-user": _solver("""
      const [user, pw] = quoted(u);
      const submit = ['click', bid(q('#subbtn'))];
      return {oracle: [['fill', bid(q('#username')), user], ['fill', bid(q('#password')), pw], submit],
              wrong: [['fill', bid(q('#username')), pw], ['fill', bid(q('#password')), user], submit]};"""),
    "focus-text": _solver("""
      return {oracle: [['focus', bid(q('#tt'))]], wrong: [['noop']]};"""),
    "click-dialog": _solver("""
      return {oracle: [['click', bid(q('button.ui-button'))]], wrong: [['noop']]};"""),
    "click-tab": _solver("""
      const n = u.match(/#(\\d)/)[1];
      const tab = q('#area ul a[href="#tabs-' + n + '"]');
      const other = q('#area ul a:not([href="#tabs-' + n + '"])');
      return {oracle: [['click', bid(tab)]], wrong: [['click', bid(other)]]};"""),
    "click-test": _solver("""
      return {oracle: [['click', bid(q('#subbtn'))]], wrong: [['noop']]};"""),
    "click-test-2": _solver("""
      return {oracle: [['click', bid(q('#subbtn'))]], wrong: [['click', bid(q('#subbtn2'))]]};"""),
    "click-button-sequence": _solver("""
      const one = ['click', bid(q('#subbtn'))], two = ['click', bid(q('#subbtn2'))];
      return {oracle: [one, two], wrong: [two, one]};"""),
    "choose-list": _solver("""
      const want = u.replace(/^Select /, '').replace(/ from the list and click Submit\\.$/, '');
      const sel = q('#options');
      const other = Array.from(sel.options).map((o) => o.textContent).find((t) => t !== want);
      const submit = ['click', bid(q('#area button'))];
      return {oracle: [['select_option', bid(sel), want], submit], wrong: [['select_option', bid(sel), other], submit]};"""),
    "click-widget": _solver("""
      const want = quoted(u)[0];
      const el = q('#area [data-type="' + want + '"]');
      const other = Array.from(document.querySelectorAll('#area [data-type]')).find(
        (e) => e.getAttribute('data-type') !== want);
      return {oracle: [['click', bid(el)]], wrong: other ? [['click', bid(other)]] : [['noop']]};"""),
}
