// askdesk UI: the plan-review pane: the plan with its outline, comments anchored to its blocks, the changes since the last review, and the decision beside it.
import { h, displayLabel, when } from './dom.js';
import { detail } from './question.js';
import { imageStrip, answerPictures } from './images.js';
import { api } from './bridge.js';
import { t, tAttr, locale } from './l10n.js';

// Block keys, kinds, paths and texts, the diff marks and the earlier versions all come from the
// backend (markdown.rs, plan_thread.rs). The page only places them: every string from the plan
// or a comment goes in as text; the only HTML inserted is the sanitized plan itself.

/**
 * Renders a plan-review question. `alone` is true when the plan is the whole batch: then Approve
 * answers at once through `submitNow`. `draft` and `onChange` work as for plainQuestion: the
 * review is restored from `draft` (choices, feedback, comments, a comment being written), and
 * `onChange` is called on every change. Returns the same controller shape as plainQuestion, plus
 * `prepare()`, which the form awaits before it reads `answer()`.
 */
export function planQuestion(q, index, { alone, submitNow, request, draft = null, onChange = () => {} }) {
  const approveLabel = q.intent.approve;
  const approveOption = q.options.find((o) => o.label === approveLabel);
  const others = q.options.filter((o) => o.label !== approveLabel);
  const blocks = new Map((q.blocks || []).map((b) => [b.key, b]));
  const order = new Map((q.blocks || []).map((b, i) => [b.key, i]));
  // The revision follows the thread: a decision on an earlier version, made while this one
  // waits, reaches it through update().
  let revision = q.revision || null;
  const changes = revision ? revision.changes : null;
  const changed = changes ? changes.marks.length + changes.removedBlocks.length > 0 : false;
  let chosen = new Set();     // the labels checked or pressed, Approve's included
  let skipped = false;
  let comments = [];          // { id, block, quote (null: the whole block), text }
  let nextComment = 1;
  let editing = null;         // { id (null: new), block, quote, text (as typed so far) }
  let current = null;         // the key of the block under the cursor
  let showChanges = changed;  // a revision opens on its changes
  let changeAt = -1;          // the change n/p last went to, in the plan's order
  let openedOnChange = false; // a revision opens on its first change, once
  const restored = new Map(); // a changed block shown word by word: its own nodes, put back for the clean plan
  let notesChoice = null;     // multi-select, asked once: 'send' | 'drop'
  let prepared = null;        // what this submit sends: { comments, general }, set by prepare()
  // The longest comment the backend takes, in bytes of UTF-8: it says so in the plan's view.
  const maxCommentBytes = q.commentLimit;

  const doc = detail(q.detailHtml || '');
  doc.classList.add('plan-doc');
  doc.tabIndex = 0;
  doc.setAttribute('aria-label', tAttr('plan-doc', 'aria-label'));
  const older = h('div', { class: 'md detail plan-doc plan-older', hidden: true });
  const commentButton = h('button', { type: 'button', class: 'block-comment-btn', hidden: true, tabindex: '-1', 'aria-label': t('plan-comment-block') }, '+');

  const blockEl = (key) => doc.querySelector(`[data-block="${CSS.escape(key)}"]`);
  const navigable = () => [...doc.querySelectorAll('[data-block]')];

  // ----- changes since the last review -----

  function decorate() {
    for (const el of doc.querySelectorAll('.diff-added, .diff-changed, .diff-moved')) {
      el.classList.remove('diff-added', 'diff-changed', 'diff-moved');
    }
    for (const el of doc.querySelectorAll('.diff-removed, .word-diff-row')) el.remove();
    for (const [words, nodes] of restored) words.replaceWith(...nodes);
    restored.clear();
    doc.classList.toggle('showing-changes', Boolean(changes && showChanges));
    if (!changes || !showChanges) return;
    for (const mark of changes.marks) {
      const el = blockEl(mark.key);
      if (!el) continue;
      el.classList.add(`diff-${mark.status}`);
      if (mark.words) showWords(el, mark.words);
    }
    for (const gone of changes.removedBlocks) {
      const before = gone.before ? blockEl(gone.before) : null;
      const ghost = ghostFor(gone, before);
      if (before && before.closest('pre') && ghost.tagName !== 'SPAN') before.closest('pre').before(ghost);
      else if (before) before.before(ghost);
      else doc.append(ghost);
    }
  }

  /**
   * A changed block read word by word: its text with the removed words struck through and the added
   * ones marked, in place of its rendered text (a table row keeps its cells and gets a line under it,
   * which wraps within the table's width).
   * The runs come from the backend as plain text; "Show clean plan" puts the rendered block back.
   */
  function showWords(el, runs) {
    const words = h('span', { class: 'word-diff' }, runs.map((run) => {
      // Inline code comes without its backticks and is shown as code.
      const text = run.code ? h('code', {}, run.text) : run.text;
      return run.op === 'delete' ? h('del', { class: 'wd-del' }, text)
        : run.op === 'insert' ? h('ins', { class: 'wd-ins' }, text)
          : text;
    }));
    if (el.tagName === 'TR') {
      el.after(h('tr', { class: 'word-diff-row' }, h('td', { colspan: String(Math.max(1, el.children.length)) }, words)));
      return;
    }
    // The block's own text: not a nested list, nor the notes placed inside it.
    const own = [...el.childNodes].filter((n) => !(n instanceof Element && n.matches('ul, ol, .plan-notes')));
    const after = own.length ? own[own.length - 1].nextSibling : el.firstChild;
    own.forEach((n) => n.remove());
    el.insertBefore(words, after);
    restored.set(words, own);
  }

  /** The changes in the plan's order: marked blocks and removed ones where they stood. */
  function changeList() {
    return showChanges ? [...doc.querySelectorAll('.diff-added, .diff-changed, .diff-moved, .diff-removed')] : [];
  }

  /** Goes to change `at` (n/p, the list of changes, a revision opening): selected and in view. */
  function goToChange(at) {
    const list = changeList();
    if (!list.length) return false;
    changeAt = Math.max(0, Math.min(list.length - 1, at));
    const el = list[changeAt];
    for (const x of doc.querySelectorAll('.change-current')) x.classList.remove('change-current');
    if (el.dataset.block) setCurrent(el.dataset.block);
    else { setCurrent(null); el.classList.add('change-current'); }
    el.scrollIntoView({ block: 'center' });
    renderChanges();
    return true;
  }

  /** A removed block, shown as struck-through text where it stood, in an element that fits there. */
  function ghostFor(gone, before) {
    const ghost = ghostElement(gone, before);
    // n/p and the list of changes name it by its path.
    ghost.dataset.path = gone.path;
    return ghost;
  }
  function ghostElement(gone, before) {
    const label = h('span', { class: 'ghost-label' }, t('plan-what-removed'));
    const text = h('span', { class: 'ghost-text' }, gone.text);
    const title = t('plan-removed-title', { path: gone.path });
    if (before && before.tagName === 'LI') return h('li', { class: 'diff-removed', title }, label, text);
    if (before && before.tagName === 'TR') {
      return h('tr', { class: 'diff-removed', title }, h('td', { colspan: String(Math.max(1, before.children.length)) }, label, text));
    }
    if (before && before.closest('pre') && gone.kind === 'line') {
      return h('span', { class: 'diff-removed code-line', title }, text);
    }
    return h('div', { class: `diff-removed ghost-${gone.kind}`, title }, label, text);
  }

  // ----- comments beside their blocks -----

  function notesFor(key) {
    const mine = comments.filter((c) => c.block === key).map(noteNode);
    const past = openPast().filter((c) => c.key === key).map(pastNode);
    const editor = editing && editing.block === key ? editorNode() : null;
    if (!mine.length && !past.length && !editor) return null;
    return h('div', { class: 'plan-notes', dataset: { for: key } }, past, mine, editor);
  }

  function noteNode(c) {
    if (editing && editing.id === c.id) return null;
    return h('div', { class: 'plan-note', dataset: { comment: String(c.id) } },
      Number.isInteger(c.carried) ? h('div', { class: 'note-head' }, h('span', { class: 'pill' }, t('plan-carried'))) : null,
      c.quote ? h('div', { class: 'note-quote' }, c.quote) : null,
      h('div', { class: 'note-text' }, c.text),
      h('div', { class: 'note-actions' },
        h('button', { type: 'button', class: 'link note-edit', onclick: () => edit(c) }, t('plan-edit')),
        h('button', { type: 'button', class: 'link note-remove', onclick: () => remove(c) }, t('plan-remove'))));
  }

  /** The last review's comments still open: not resolved, not carried forward into this round. */
  function openPast() {
    return revision ? revision.comments.filter((c) => c.state === 'open') : [];
  }

  function pastNode(c) {
    const outdated = c.placement === 'outdated';
    return h('div', { class: `plan-note past ${c.placement}`, dataset: { past: String(c.index) } },
      h('div', { class: 'note-head' },
        h('span', { class: `pill ${outdated ? 'outdated' : ''}` }, t(outdated ? 'plan-outdated' : 'plan-last-review')),
        outdated ? h('span', { class: 'note-why' }, t('plan-outdated-why')) : null),
      c.narrowed ? h('div', { class: 'note-quote' }, c.quote) : null,
      h('div', { class: 'note-text' }, c.text),
      pastActions(c));
  }

  /** Resolve (done with it) or, on a block still in the plan, carry forward (sent again with this round). */
  function pastActions(c) {
    return h('div', { class: 'note-actions' },
      c.key ? h('button', { type: 'button', class: 'link past-carry', onclick: () => setPast(c, 'carried') }, t('plan-carry')) : null,
      h('button', { type: 'button', class: 'link past-resolve', onclick: () => setPast(c, 'resolved') }, t('plan-resolve')));
  }

  /** Records with the backend what was done with a past comment, then shows it; carrying makes it one of this round's comments. */
  async function setPast(c, state) {
    try {
      await api.setPastComment(request, c.index, state);
    } catch (error) {
      pastError.textContent = t('not-changed', { error: (error && error.message) || error });
      return;
    }
    pastError.textContent = '';
    c.state = state;
    if (state === 'carried') {
      comments.push({ id: nextComment++, block: c.key, quote: c.narrowed ? c.quote : null, text: c.text, carried: c.index });
    }
    changedComments();
  }

  function editorNode() {
    const block = blocks.get(editing.block);
    const existing = editing.id === null ? null : comments.find((c) => c.id === editing.id);
    const box = h('textarea', {
      class: 'note-input other-input',
      rows: 3,
      placeholder: t('plan-comment-placeholder'),
      'aria-label': t('plan-comment-on', { path: block ? block.path : t('plan-the-block') }),
    });
    // What was typed survives the editor being drawn again (Show changes, a newer revision).
    box.value = typeof editing.text === 'string' ? editing.text : existing ? existing.text : '';
    box.addEventListener('input', () => { if (editing) editing.text = box.value; });
    const limit = h('span', { class: 'note-limit', role: 'status' });
    const over = () => {
      const bytes = new TextEncoder().encode(box.value.trim()).length;
      const tooLong = bytes > maxCommentBytes;
      limit.classList.toggle('over', tooLong);
      limit.textContent = tooLong
        ? t('plan-too-long', { max: maxCommentBytes, bytes })
        : bytes > maxCommentBytes * 0.8 ? t('plan-bytes', { max: maxCommentBytes, bytes }) : '';
      return tooLong;
    };
    box.addEventListener('input', over);
    over();
    const save = () => {
      const text = box.value.trim();
      if (!text || over()) { box.focus(); return; }
      if (existing) existing.text = text;
      else comments.push({ id: nextComment++, block: editing.block, quote: editing.quote, text });
      editing = null;
      changedComments();
      doc.focus({ preventScroll: true });
    };
    const cancel = () => { editing = null; changedComments(); doc.focus({ preventScroll: true }); };
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); e.stopPropagation(); save(); }
      else if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        // Esc never throws typed words away: with something new typed it only leaves the box (the
        // editor stays open, Cancel discards); with nothing typed it closes the editor.
        const typed = box.value.trim() !== '' && box.value.trim() !== (existing ? existing.text : '');
        if (typed) doc.focus({ preventScroll: true });
        else cancel();
      }
    });
    return h('div', { class: 'plan-note editor' },
      editing.quote ? h('div', { class: 'note-quote' }, editing.quote) : null,
      box,
      limit,
      h('div', { class: 'note-actions' },
        h('span', { class: 'note-keys' }, t('plan-editor-keys')),
        h('button', { type: 'button', class: 'button ghost small note-cancel', onclick: cancel }, t('plan-cancel')),
        h('button', { type: 'button', class: 'button primary small note-save', onclick: save }, t('plan-save-comment'))));
  }

  /** Puts every note group after its block: inside a list item, as a row under a table row, under a code block. */
  function placeNotes() {
    for (const el of doc.querySelectorAll('.plan-notes, .note-row')) el.remove();
    for (const el of doc.querySelectorAll('.block-commented')) el.classList.remove('block-commented');
    for (const el of navigable()) {
      const notes = notesFor(el.dataset.block);
      if (!notes) continue;
      el.classList.add('block-commented');
      if (el.tagName === 'TR') {
        el.after(h('tr', { class: 'note-row' }, h('td', { colspan: String(Math.max(1, el.children.length)) }, notes)));
      } else if (el.closest('pre')) {
        let after = el.closest('pre');
        while (after.nextElementSibling && after.nextElementSibling.classList.contains('plan-notes') &&
               after.nextElementSibling.dataset.code === 'true') after = after.nextElementSibling;
        notes.dataset.code = 'true';
        notes.prepend(h('div', { class: 'note-where' }, blocks.get(el.dataset.block)?.path || ''));
        after.after(notes);
      } else if (el.tagName === 'LI') {
        const sub = [...el.children].find((c) => c.tagName === 'UL' || c.tagName === 'OL');
        if (sub) sub.before(notes); else el.append(notes);
      } else {
        el.after(notes);
      }
    }
    const box = doc.querySelector('.note-input');
    if (box) box.focus();
  }

  function edit(c) {
    editing = { id: c.id, block: c.block, quote: c.quote };
    changedComments();
  }

  function remove(c) {
    comments = comments.filter((x) => x !== c);
    if (editing && editing.id === c.id) editing = null;
    // A carried comment removed goes back to the last review's, open again.
    const past = Number.isInteger(c.carried) && revision ? revision.comments.find((p) => p.index === c.carried) : null;
    if (past) {
      past.state = 'open';
      api.setPastComment(request, past.index, 'open').catch(() => {});
    }
    changedComments();
  }

  /** Starts a comment on the current block, narrowed to the selected text when it lies inside one block. */
  function startComment() {
    const narrowed = selectionInBlock();
    const key = narrowed ? narrowed.key : current;
    if (!key || !blocks.has(key)) return;
    setCurrent(key);
    editing = { id: null, block: key, quote: narrowed ? narrowed.quote : null };
    changedComments();
  }

  function selectionInBlock() {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) return null;
    const range = selection.getRangeAt(0);
    const at = (node) => (node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement);
    const start = at(range.startContainer)?.closest('[data-block]');
    const end = at(range.endContainer)?.closest('[data-block]');
    if (!start || start !== end || !doc.contains(start)) return null;
    const quote = selection.toString().replace(/\s+/g, ' ').trim();
    return quote ? { key: start.dataset.block, quote } : null;
  }

  // ----- the block cursor -----

  function setCurrent(key) {
    if (current) blockEl(current)?.classList.remove('block-current');
    current = key;
    const el = key ? blockEl(key) : null;
    if (!el) { commentButton.hidden = true; return; }
    el.classList.add('block-current');
    placeCommentButton(el);
  }

  function placeCommentButton(el) {
    const host = main.getBoundingClientRect();
    const box = el.getBoundingClientRect();
    commentButton.hidden = false;
    // A "+" in the margin, as beside a diff's lines; its name says what it comments on.
    const label = t(selectionInBlock() ? 'plan-comment-selection' : 'plan-comment-block');
    commentButton.setAttribute('aria-label', label);
    commentButton.title = label;
    commentButton.classList.toggle('on-selection', Boolean(selectionInBlock()));
    commentButton.style.top = `${Math.max(0, box.top - host.top)}px`;
  }

  function move(step) {
    const list = navigable();
    if (!list.length) return;
    const at = list.findIndex((el) => el.dataset.block === current);
    const next = at < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, at + step));
    setCurrent(list[next].dataset.block);
    list[next].scrollIntoView({ block: 'nearest' });
  }

  doc.addEventListener('keydown', (e) => {
    if (e.target !== doc || e.ctrlKey || e.altKey || e.metaKey) return;
    if (e.key === 'j' || e.key === 'ArrowDown') { e.preventDefault(); move(1); }
    else if (e.key === 'k' || e.key === 'ArrowUp') { e.preventDefault(); move(-1); }
    else if (e.key === 'Home') { e.preventDefault(); current = null; move(1); }
    else if (e.key === 'End') { e.preventDefault(); current = null; move(-1); }
    else if ((e.key === 'c' || e.key === 'Enter') && !skipped) { e.preventDefault(); startComment(); }
  });
  // n/p go to the next and previous change of a revision, from anywhere in the pane but a text box.
  function onChangeKey(e) {
    if (e.ctrlKey || e.altKey || e.metaKey || (e.key !== 'n' && e.key !== 'p') || !changeList().length) return;
    const t = e.target;
    if (t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || (t instanceof HTMLElement && t.isContentEditable) ||
        (t instanceof HTMLInputElement && !['radio', 'checkbox', 'button'].includes(t.type))) return;
    e.preventDefault();
    goToChange(changeAt + (e.key === 'n' ? 1 : -1));
    doc.focus({ preventScroll: true });
  }
  doc.addEventListener('click', (e) => {
    if (!(e.target instanceof Element) || e.target.closest('.plan-notes, .note-row, .diff-removed, a')) return;
    const el = e.target.closest('[data-block]');
    if (el) setCurrent(el.dataset.block);
  });
  doc.addEventListener('mouseup', () => {
    const narrowed = selectionInBlock();
    if (narrowed) setCurrent(narrowed.key);
  });
  // The button must not take the selection away before it reads it.
  commentButton.addEventListener('mousedown', (e) => e.preventDefault());
  commentButton.addEventListener('click', () => { if (!skipped) startComment(); });

  // ----- the side panel's list -----

  const commentList = h('ol', { class: 'comment-list' });
  const pastError = h('div', { class: 'past-error', role: 'alert' });

  // The list of changes, beside the outline: each change by what happened and where, in the plan's order.
  const changesList = h('ol', { class: 'change-list' });
  const changesNav = changed
    ? h('nav', { class: 'plan-changes', 'aria-label': tAttr('plan-changes-nav', 'aria-label') },
        h('div', { class: 'side-title' }, `${t('plan-changes')} `, h('span', { class: 'change-keys', title: tAttr('plan-changes-keys', 'title') }, t('plan-changes-keys'))),
        changesList)
    : null;
  function renderChanges() {
    if (!changesNav) return;
    const list = changeList();
    changesNav.hidden = !list.length;
    changesList.replaceChildren(...list.map((el, i) => {
      const key = el.dataset.block;
      const what = el.classList.contains('diff-removed') ? 'removed'
        : el.classList.contains('diff-added') ? 'added' : el.classList.contains('diff-moved') ? 'moved' : 'changed';
      const path = key ? blocks.get(key)?.path || key : el.dataset.path || '';
      return h('li', { class: `change-item ${what}${i === changeAt ? ' current' : ''}` },
        h('button', { type: 'button', class: 'change-jump', onclick: () => { goToChange(i); doc.focus({ preventScroll: true }); } },
          h('span', { class: `change-what ${what}` }, t(`plan-what-${what}`)), ' ', h('span', { class: 'change-path' }, path)));
    }));
  }
  const commentCount = h('span', { class: 'count zero' }, '0');
  const commentHint = h('div', { class: 'comment-hint' });

  function renderSide() {
    commentCount.textContent = String(comments.length);
    commentCount.classList.toggle('zero', comments.length === 0);
    const jump = (key) => () => {
      setCurrent(key);
      blockEl(key)?.scrollIntoView({ block: 'center', behavior: 'smooth' });
      doc.focus({ preventScroll: true });
    };
    const inOrder = [...comments].sort((a, b) => order.get(a.block) - order.get(b.block) || a.id - b.id);
    const mine = inOrder.map((c) => {
      const block = blocks.get(c.block);
      return h('li', { class: 'comment-item', dataset: { comment: String(c.id) } },
        h('button', { type: 'button', class: 'comment-jump', onclick: jump(c.block) },
          h('span', { class: 'comment-path' }, block ? block.path : c.block),
          h('span', { class: 'comment-text' }, c.text)),
        h('span', { class: 'comment-actions' },
          h('button', { type: 'button', class: 'link', onclick: () => edit(c), 'aria-label': t('plan-edit-on', { path: block ? block.path : '' }) }, t('plan-edit')),
          h('button', { type: 'button', class: 'link', onclick: () => remove(c), 'aria-label': t('plan-remove-on', { path: block ? block.path : '' }) }, t('plan-remove'))));
    });
    const past = openPast();
    const placed = past.filter((c) => c.placement !== 'gone');
    const gone = past.filter((c) => c.placement === 'gone');
    commentList.replaceChildren(...[
      ...(mine.length ? mine : [h('li', { class: 'comment-empty' }, t('plan-comments-empty'))]),
      placed.length ? h('li', { class: 'comment-sub' }, t('plan-from-last-review')) : null,
      ...placed.map((c) => h('li', { class: `comment-item past ${c.placement}` },
        h('button', { type: 'button', class: 'comment-jump', onclick: jump(c.key) },
          h('span', { class: 'comment-path' }, c.path, c.placement === 'outdated' ? h('span', { class: 'pill outdated' }, t('plan-outdated-small')) : null),
          h('span', { class: 'comment-text' }, c.text)))),
      gone.length ? h('li', { class: 'comment-sub' }, t('plan-gone')) : null,
      ...gone.map((c) => h('li', { class: 'comment-item past gone', dataset: { past: String(c.index) } },
        h('div', { class: 'comment-static' },
          h('span', { class: 'comment-path' }, c.path),
          h('span', { class: 'note-quote' }, c.quote),
          h('span', { class: 'comment-text' }, c.text)),
        h('span', { class: 'comment-actions' },
          h('button', { type: 'button', class: 'link past-resolve', onclick: () => setPast(c, 'resolved') }, t('plan-resolve'))))),
    ].filter(Boolean));
    commentHint.textContent = comments.length
      ? t('plan-comments-go', { comments: comments.length })
      : '';
  }

  function changedComments() {
    prepared = null;
    placeNotes();
    renderSide();
    renderChanges();
    card.classList.remove('missing');
    if (comments.length && !q.multiSelect && chosen.size) {
      // Comments are feedback: on a single-select plan they replace the choice, as typed feedback does.
      choose(null);
    }
    renderSends();
    if (current) { const el = blockEl(current); if (el) placeCommentButton(el); }
    onChange();
  }

  // ----- revision bar and earlier versions -----

  const toggle = h('button', { type: 'button', class: 'button small revision-toggle' });
  const olderBar = h('div', { class: 'older-bar', hidden: true });
  function showVersion(version) {
    const showing = version !== null;
    doc.hidden = showing;
    commentButton.hidden = true;
    older.hidden = !showing;
    olderBar.hidden = !showing;
    if (!showing) { if (current) setCurrent(current); return; }
    older.innerHTML = version.html; // sanitized by markdown.rs, like detailHtml
    olderBar.replaceChildren(
      h('span', {}, t('plan-version', { version: version.version }), version.decision ? ` · ${version.decision}` : '',
        ` · ${t('plan-asked-at', { when: when(version.askedAt) })}`),
      h('button', { type: 'button', class: 'link older-back', onclick: () => showVersion(null) }, t('plan-back-to', { version: revision.version })));
    // Below the sticky revision bar, wherever the plan was scrolled (a revision opens on its first change).
    olderBar.style.scrollMarginTop = `${(revisionBar ? revisionBar.offsetHeight : 0) + 24}px`;
    olderBar.scrollIntoView({ block: 'start' });
    olderBar.querySelector('button').focus({ preventScroll: true });
  }
  function renderToggle() {
    toggle.textContent = t(showChanges ? 'plan-show-clean' : 'plan-show-changes');
    toggle.setAttribute('aria-pressed', String(showChanges));
  }
  toggle.addEventListener('click', () => { showChanges = !showChanges; changeAt = -1; renderToggle(); decorate(); placeNotes(); renderChanges(); });
  renderToggle();

  /** What changed, in words: "1 block moved", "2 blocks added · 1 changed" (only what did). */
  function changeSummary() {
    const counts = [['added', changes.added], ['changed', changes.changed], ['removed', changes.removed], ['moved', changes.moved]]
      .filter(([, n]) => n > 0);
    return counts.map(([what, n], i) => t(i === 0 ? 'plan-change-first' : 'plan-change-more', { count: n, what: t(`plan-what-${what}`) }))
      .join(' · ');
  }

  function revisionBarFor() {
    if (!revision) return null;
    const since = revision.previous[revision.previous.length - 1].version;
    const badge = changes.plus + changes.minus > 0
      ? h('span', { class: 'diff-badge' }, h('span', { class: 'plus' }, `+${changes.plus}`), h('span', { class: 'minus' }, `−${changes.minus}`))
      : null;
    return h('div', { class: 'revision-bar' },
      h('div', { class: 'revision-line' },
        h('span', { class: 'revision-title' }, t(changed ? 'plan-changes-since' : 'plan-no-changes-since', { version: since })),
        changed ? h('span', { class: 'revision-summary' }, changeSummary()) : null,
        changed ? badge : null),
      revision.feedback
        ? h('div', { class: 'revision-asked' },
            h('span', { class: 'asked-label' }, t('plan-you-asked')),
            h('span', { class: 'asked-text', title: revision.feedback }, revision.feedback))
        : null,
      h('div', { class: 'revision-versions' },
        h('span', { class: 'version-now' }, t('plan-version', { version: revision.version })),
        h('span', { class: 'muted' }, t('plan-earlier')),
        revision.previous.map((v) => h('button', {
          type: 'button', class: 'version-link', title: v.decision ? t('plan-version-decision', { version: v.version, decision: v.decision }) : t('plan-version', { version: v.version }),
          onclick: () => showVersion(v),
        }, `v${v.version}`, v.decision ? h('span', { class: 'version-decision' }, v.decision) : null)),
        changed ? toggle : null));
  }
  let revisionBar = revisionBarFor();

  /** A newer view of this request: the earlier versions' decisions and comments may have changed. */
  function updateRevision(next) {
    if (!next || !revision || JSON.stringify(next) === JSON.stringify(revision)) return;
    revision = next;
    const bar = revisionBarFor();
    revisionBar.replaceWith(bar);
    revisionBar = bar;
    placeNotes();
    renderSide();
  }

  // ----- outline and decision -----

  const outline = q.outline.length
    ? h('nav', { class: 'plan-outline', 'aria-label': tAttr('plan-outline', 'aria-label') },
        h('div', { class: 'side-title' }, t('plan-contents')),
        h('ol', {}, q.outline.map((heading) =>
          h('li', { class: `lvl${Math.min(heading.level, 4)}` },
            h('button', {
              type: 'button',
              class: 'outline-link',
              onclick: () => {
                const target = doc.querySelector(`#${CSS.escape(heading.anchor)}`);
                if (target) target.scrollIntoView({ behavior: 'smooth', block: 'start' });
              },
            }, heading.text)))))
    : null;

  const approve = h('button', { type: 'button', class: 'button primary plan-approve', 'aria-pressed': 'false' },
    h('span', { class: 'check', 'aria-hidden': 'true' }, '✓'), ' ', displayLabel(approveLabel));
  // A single-select plan that is the whole batch sends with its own buttons, which keep their
  // meaning whatever is typed: Approve always approves, and Send (shown once there is feedback or
  // another option is chosen) sends that instead. Otherwise Approve is pressed like an option and
  // the window's Submit sends.
  const sendsItself = alone && !q.multiSelect;
  const send = h('button', { type: 'button', class: 'button plan-send', hidden: true });
  // Under Approve: what it does now (its option's description, or what approving would drop).
  const approveDesc = h('div', { class: 'option-desc approve-desc' });
  function renderPrimary() {
    const other = [...chosen].find((label) => label !== approveLabel);
    const typed = hasFeedback();
    send.hidden = !sendsItself || skipped || !(typed || other);
    send.textContent = typed ? t('plan-send-feedback') : other ? t('plan-send-option', { option: displayLabel(other) }) : '';
    const dropped = !q.multiSelect && typed ? pendingFeedback() : '';
    approveDesc.textContent = dropped
      ? t('plan-approving-drops', { what: dropped })
      : (approveOption && approveOption.description) || '';
    approveDesc.hidden = !approveDesc.textContent;
    // Single select: with feedback the options cannot go (the feedback replaces the choice).
    if (!q.multiSelect) otherInputs.forEach((input) => { input.disabled = skipped || typed; });
  }
  // A multi-select review takes any number of labels (protocol 1): its other options are checkboxes.
  const otherInputs = others.map((o) =>
    h('input', { type: q.multiSelect ? 'checkbox' : 'radio', name: `plan${index}`, value: o.label, class: 'option-input' }));
  const feedback = h('textarea', {
    class: 'plan-feedback other-input',
    rows: 4,
    placeholder: t('plan-feedback-placeholder'),
    'aria-label': t('plan-feedback-aria'),
  });

  // A picture pasted or dropped into the feedback box goes with the feedback.
  const pictures = answerPictures(feedback, {
    request,
    kept: draft && draft.pictures,
    label: t('plan-picture-label'),
    onChange: () => {
      prepared = null;
      card.classList.remove('missing');
      if (!q.multiSelect && pictures.count() && chosen.size) choose(null);
      else renderSends();
      onChange();
    },
  });

  /** Whether the answer carries feedback: typed, pictures, or comments on the plan. */
  const hasFeedback = () => Boolean(feedback.value.trim() || comments.length || pictures.count());

  /** Single select: `label` becomes the one choice (null: none). */
  function choose(label) {
    chosen = new Set(label ? [label] : []);
    sync();
  }
  /** Multi select: checks or unchecks one label. */
  function mark(label, on) {
    if (on) chosen.add(label); else chosen.delete(label);
    sync();
  }
  function sync() {
    const approved = chosen.has(approveLabel);
    approve.classList.toggle('pressed', approved);
    approve.setAttribute('aria-pressed', String(approved));
    otherInputs.forEach((input) => { input.checked = chosen.has(input.value); });
    card.classList.remove('missing');
    renderSends();
    onChange();
  }

  /** Says what Submit sends now, so what shows pressed or checked is never more than that. */
  const sendsLine = h('div', { class: 'plan-sends', role: 'status' });
  function renderSends() {
    const labels = q.options.filter((o) => chosen.has(o.label)).map((o) => displayLabel(o.label));
    const typed = hasFeedback();
    let text;
    if (skipped) text = t('plan-sends-skipped');
    else if (!q.multiSelect && typed) text = t('plan-sends-instead');
    else if (labels.length) text = t(typed ? 'plan-sends-labels-feedback' : 'plan-sends-labels', { labels: labels.join(', ') });
    else text = t(typed ? 'plan-sends-feedback' : 'plan-sends-nothing');
    sendsLine.textContent = text;
    renderPrimary();
  }

  /**
   * Presses Approve. On a single-select review an approval cannot carry feedback (protocol 1: custom
   * replaces the choice), so with feedback typed or comments made it asks first, naming what would be
   * dropped: approving empties the box and removes the comments, so what shows is what is sent.
   * `now`: answer at once (Approve clicked on a plan that is the whole batch; a drop confirmed on a
   * single-select one sends too, whatever asked).
   */
  async function pressApprove(now) {
    if (q.multiSelect && chosen.has(approveLabel)) {
      // A checked approval on a multi-select review is one checkbox among others: pressed again, it lets go.
      mark(approveLabel, false);
      return;
    }
    if (!q.multiSelect && hasFeedback()) {
      if ((await confirmDrop()) !== 'drop') { approve.focus(); return; }
      feedback.value = '';
      pictures.clear();
      comments = [];
      editing = null;
      changedComments();
      choose(approveLabel);
      // Confirming "Approve and drop" is a decision: a plan that sends itself sends it.
      if (sendsItself) submitNow();
      return;
    }
    if (q.multiSelect) mark(approveLabel, true); else choose(approveLabel);
    // A multi-select approval carries typed feedback beside it; Submit sends both, as shown.
    if (now && !(q.multiSelect && feedback.value.trim())) submitNow();
  }
  // Alone, Approve answers at once (a multi-select approval with typed feedback waits for Submit).
  approve.addEventListener('click', () => pressApprove(alone));
  // Send never approves: it sends the feedback, or the other option chosen, as they are.
  send.addEventListener('click', () => {
    if (hasFeedback()) choose(null);
    submitNow();
  });
  otherInputs.forEach((input) => input.addEventListener('change', () => {
    if (q.multiSelect) mark(input.value, input.checked);
    // Single select: feedback replaces the choice (protocol 1), so with feedback there no option stays
    // checked; the line under the options says the feedback goes instead.
    else if (input.checked) choose(hasFeedback() ? null : input.value);
  }));
  // Single select, on a plan that sends itself: a second click on the option chosen lets it go (and
  // Send with it).
  otherInputs.forEach((input) => input.addEventListener('click', () => {
    if (!q.multiSelect && sendsItself && input.dataset.was === 'true') { input.checked = false; choose(null); }
  }));
  otherInputs.forEach((input) => input.addEventListener('pointerdown', () => { input.dataset.was = String(input.checked); }));
  feedback.addEventListener('input', () => {
    prepared = null;
    card.classList.remove('missing');
    // Single select: feedback replaces the choice (protocol 1), so the choice visibly lets go.
    if (!q.multiSelect && feedback.value.trim() && chosen.size) choose(null);
    else renderSends();
  });

  const skipButton = h('button', { type: 'button', class: 'link skip' }, t('skip'));
  function setSkipped(on) {
    skipped = on;
    card.classList.toggle('skipped', skipped);
    for (const el of [approve, send, feedback, ...otherInputs]) el.disabled = skipped;
    renderPrimary();
    skipButton.textContent = t(skipped ? 'undo-skip' : 'skip');
    renderSends();
    onChange();
  }
  skipButton.addEventListener('click', () => setSkipped(!skipped));

  const decision = h('div', { class: 'plan-decision card' },
    q.header ? h('div', { class: 'q-header', dir: 'auto' }, q.header) : null,
    h('div', { class: 'q-text', dir: 'auto' }, q.question),
    approve,
    approveDesc,
    others.length
      ? h('div', { class: 'options compact', role: q.multiSelect ? 'group' : 'radiogroup' }, others.map((o, i) =>
          h('label', { class: 'option' }, otherInputs[i],
            h('span', { class: 'option-body' },
              h('span', { class: 'option-title' }, h('span', { class: 'option-label', dir: 'auto' }, displayLabel(o.label))),
              o.description ? h('span', { class: 'option-desc', dir: 'auto' }, o.description) : null))))
      : null,
    h('label', { class: 'feedback-label' }, t('plan-feedback'), feedback),
    pictures.node,
    commentHint,
    send,
    sendsLine,
    h('div', { class: 'q-foot' }, skipButton));

  const commentsPanel = h('section', { class: 'plan-comments card', 'aria-label': tAttr('plan-comments-panel', 'aria-label') },
    h('div', { class: 'side-title' }, `${t('plan-comments')} `, commentCount),
    pastError,
    commentList);

  const main = h('div', { class: 'plan-main card' },
    h('div', { class: 'plan-head' },
      h('span', { class: 'plan-kicker' }, t('plan-kicker')),
      h('span', { class: 'plan-keys' }, t('plan-keys'))),
    revisionBar, olderBar, imageStrip(q.images, t('plan-image')), doc, older, commentButton);

  const card = h('section', { class: 'question plan-review', dataset: { qid: q.id } },
    h('div', { class: 'plan-layout' },
      main,
      h('div', { class: 'plan-side' }, decision, changesNav, commentsPanel, outline)));
  card.addEventListener('keydown', onChangeKey);

  /** Puts back what draft() saved: only labels this question has and comments on blocks its plan has. */
  function restore(saved) {
    const labels = new Set(q.options.map((o) => o.label));
    comments = (Array.isArray(saved.comments) ? saved.comments : [])
      .filter((c) => c && blocks.has(c.block) && typeof c.text === 'string')
      .map((c) => ({ id: nextComment++, block: c.block, quote: typeof c.quote === 'string' ? c.quote : null, text: c.text,
        carried: Number.isInteger(c.carried) ? c.carried : undefined }));
    const open = saved.editing;
    if (open && blocks.has(open.block)) {
      const of = Number.isInteger(open.comment) ? comments[open.comment] : null;
      editing = { id: of ? of.id : null, block: open.block, quote: of ? of.quote : typeof open.quote === 'string' ? open.quote : null,
        text: typeof open.text === 'string' ? open.text : undefined };
    }
    feedback.value = typeof saved.feedback === 'string' ? saved.feedback : '';
    chosen = new Set((Array.isArray(saved.chosen) ? saved.chosen : []).filter((label) => labels.has(label)));
    sync();
    if (saved.skipped) setSkipped(true);
  }
  if (draft) restore(draft);
  card.addEventListener('input', onChange);
  card.addEventListener('change', onChange);

  decorate();
  placeNotes();
  renderSide();
  renderSends();
  renderChanges();

  // ----- approving with feedback or comments -----

  /**
   * What a single-select approval would drop, named: "your feedback", "2 comments", "your feedback
   * and 1 comment" ('' with none).
   */
  function pendingFeedback() {
    const n = comments.length;
    const typed = feedback.value.trim() !== '';
    const p = pictures.count();
    const parts = [typed ? t('plan-pending-feedback') : '', n ? t('plan-pending-comments', { count: n }) : '',
      p ? t('plan-pending-pictures', { count: p }) : ''].filter(Boolean);
    return new Intl.ListFormat(locale(), { type: 'conjunction' }).format(parts);
  }

  /**
   * Single select: asks before an approval drops the feedback, naming it ("Approve and drop 2
   * comments?"); resolves to 'drop' or null (go back, the focus starts there).
   */
  function confirmDrop() {
    const what = pendingFeedback();
    const items = comments.length + pictures.count() + (feedback.value.trim() ? 1 : 0);
    return askInModal(t('plan-drop-title', { what }),
      `${t('plan-drop-text', { what })} ${t(sendsItself ? 'plan-drop-send-itself' : 'plan-drop-submit', { items })}`,
      [['back', t('plan-go-back'), 'ghost'], ['drop', t('plan-drop-ok', { items }), 'primary']], 0);
  }

  /** Multi select: asks whether the comments go with the approval as notes; 'send', 'drop' or null. */
  function askAboutNotes() {
    const n = { comments: comments.length };
    return askInModal(t('plan-notes-title', n), t('plan-notes-text', n),
      [['send', t('plan-notes-send', n), 'primary'], ['drop', t('plan-notes-drop'), 'ghost']], 1);
  }

  /**
   * A question over the whole window: `choices` are [value, label, tone], the focus starts on
   * `start`; resolves to the value chosen, or null on Esc and on a 'back' choice.
   */
  function askInModal(title, text, choices, start) {
    return new Promise((resolve) => {
      const buttons = choices.map(([value, label, tone]) =>
        h('button', { type: 'button', class: `button ${tone}`, dataset: { choice: value }, onclick: () => done(value) }, label));
      const modal = h('div', { class: 'modal-backdrop plan-notes-modal' },
        h('div', { class: 'modal', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'plan-notes-title' },
          h('h2', { id: 'plan-notes-title' }, title),
          h('p', { class: 'modal-text' }, text),
          h('div', { class: 'modal-actions' }, buttons)));
      function done(value) {
        modal.remove();
        resolve(value === 'back' ? null : value);
      }
      modal.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); done(null); }
        if (e.key === 'Tab') {
          // Keep the focus in the dialog.
          const at = buttons.indexOf(document.activeElement);
          e.preventDefault();
          buttons[(at + (e.shiftKey ? buttons.length - 1 : 1)) % buttons.length].focus();
        }
      });
      document.body.append(modal);
      buttons[start].focus();
    });
  }

  return {
    id: q.id,
    node: card,
    /** What is chosen, typed and commented so far, for a page built later to restore (JSON). */
    draft() {
      const at = editing && editing.id !== null ? comments.findIndex((c) => c.id === editing.id) : -1;
      return {
        id: q.id,
        chosen: [...chosen],
        skipped,
        feedback: feedback.value,
        pictures: pictures.kept(),
        comments: comments.map((c) => ({ block: c.block, quote: c.quote, text: c.text, carried: c.carried })),
        editing: editing
          ? { block: editing.block, quote: editing.quote, comment: at >= 0 ? at : null,
              text: typeof editing.text === 'string' ? editing.text : null }
          : null,
      };
    },
    /** Settles which comments go with the answer; false when the human went back. */
    async prepare() {
      prepared = null;
      if (skipped) return true;
      let send = comments;
      // Only a multi-select approval can carry comments: on a single-select review pressing
      // Approve already asked and emptied them (pressApprove).
      if (q.multiSelect && chosen.has(approveLabel) && comments.length) {
        if (!notesChoice) notesChoice = await askAboutNotes();
        const choice = notesChoice;
        if (choice === null) return false;
        if (choice === 'drop') send = [];
      }
      prepared = { comments: send, general: feedback.value.trim() };
      return true;
    },
    /**
     * The comments that go with the answer (after prepare()): the backend builds the feedback text
     * from them and the general feedback in `custom`, and records them once the answer is sent.
     */
    comments() {
      if (skipped || !prepared) return [];
      return prepared.comments.map((c) => ({ block: c.block, quote: c.quote, text: c.text }));
    },
    answer() {
      if (skipped) return { id: q.id, selected: [] };
      const sending = prepared ? prepared.comments : comments;
      const general = prepared ? prepared.general : feedback.value.trim();
      const images = pictures.images();
      // With comments the answer is feedback even with nothing typed: `custom` is then filled in
      // by the backend from the comments. Pictures go with the feedback (protocol 1.4).
      const feedbackSent = Boolean(general || sending.length || images.length);
      const withFeedback = (item) => {
        item.custom = general;
        if (images.length) item.images = images;
        return item;
      };
      if (!q.multiSelect && feedbackSent) return withFeedback({ id: q.id, selected: [] });
      // In option order, as the question lists them.
      const labels = q.options.map((o) => o.label).filter((label) => chosen.has(label));
      if (!labels.length) return feedbackSent ? withFeedback({ id: q.id, selected: [] }) : null;
      return feedbackSent ? withFeedback({ id: q.id, selected: labels }) : { id: q.id, selected: labels };
    },
    /** The keys this plan takes, for the window's footer (the digits and Ctrl+Enter are the window's). */
    keys: [t('plan-key-select'), t('plan-key-comment'), ...(changed ? [t('plan-key-changes')] : [])],
    pick(n) {
      if (skipped) return false;
      const labels = [approveLabel, ...others.map((o) => o.label)];
      const label = labels[n - 1];
      if (!label) return false;
      if (n === 1) pressApprove(false);
      else if (q.multiSelect) mark(label, !chosen.has(label));
      else choose(hasFeedback() ? null : label);
      return true;
    },
    /** The request's newer view from the backend (the queue was read again). */
    update(view) { updateRevision(view.revision || null); },
    focus() { approve.focus(); },
    /** Where the focus starts when the request comes into view: the plan, read with J/K; a
     * revision opens on its first change, once. */
    focusStart() {
      doc.focus({ preventScroll: true });
      if (openedOnChange || !showChanges) return;
      openedOnChange = true;
      goToChange(0);
    },
    markMissing() {
      card.classList.add('missing');
      decision.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    },
  };
}
