// askdesk UI: the images agents attach to questions, options and plans (protocol 1.4), shown inline
// and enlarged on a click; and the pictures the person pastes or drops into an answer, made safe by
// the backend before they are shown. Only re-encoded PNGs are shown, as data: URLs; anything else is
// left out.

import { h, errorText } from './dom.js';
import { api } from './bridge.js';
import { t } from './l10n.js';

// The base64 of a PNG's signature: every image the backend passes on starts with it.
const PNG_START = 'iVBORw0KGgo';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The data: URL of `image` when it is a re-encoded PNG, else null. */
function dataUrl(image) {
  if (!image || image.mime !== 'image/png' || typeof image.data !== 'string') return null;
  if (!image.data.startsWith(PNG_START) || !BASE64.test(image.data)) return null;
  return `data:image/png;base64,${image.data}`;
}

/** A row of thumbnails for `images` (null when none can be shown); a click enlarges one. */
export function imageStrip(images, label = t('image')) {
  const urls = (images || []).map(dataUrl).filter(Boolean);
  if (!urls.length) return null;
  return h('div', { class: 'image-strip' }, urls.map((src, i) => {
    const name = urls.length > 1 ? t('image-numbered', { label, number: i + 1, count: urls.length }) : label;
    const button = h('button', { type: 'button', class: 'image-thumb', 'aria-label': t('image-enlarge', { name }) },
      h('img', { src, alt: name }));
    button.addEventListener('click', (e) => {
      // A thumbnail inside an option's label must not choose the option.
      e.preventDefault();
      e.stopPropagation();
      enlarge(src, name);
    });
    return button;
  }));
}

/** The image at full size in a modal dialog; a click or Escape closes it. */
function enlarge(src, name) {
  const dialog = h('dialog', { class: 'image-large', 'aria-label': name },
    h('img', { src, alt: name }));
  dialog.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

/** The base64 of a file's bytes. */
function base64Of(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.addEventListener('load', () => resolve(String(reader.result).replace(/^data:[^,]*,/, '')));
    reader.addEventListener('error', () => reject(reader.error));
    reader.readAsDataURL(file);
  });
}

/**
 * Pictures the person answers `request` with: pasted or dropped into `box` (a text box), each made
 * safe by the backend (re-encoded as a PNG, or refused with the limit named) before it shows as a
 * thumbnail with Remove. A refused picture leaves the typed text as it was. The backend keeps each
 * while the request waits, under a number: `kept` are the numbers a draft saved, shown again once
 * the backend gives them back. Returns { node (the thumbnails and the refusal, to place under the
 * box), images() (the PNGs, for the answer), kept() (the numbers, for the draft), count(), clear() }.
 * `onChange` is called when a picture comes or goes.
 */
export function answerPictures(box, { request, kept = [], onChange = () => {}, label = t('image-yours') } = {}) {
  let pictures = [];
  // The numbers of a draft's pictures not back from the backend yet: a draft saved meanwhile names them still.
  let restoring = (Array.isArray(kept) ? kept : []).filter(Number.isInteger);
  const strip = h('div', { class: 'image-strip answer-pictures', hidden: true });
  const refused = h('div', { class: 'picture-refused', role: 'alert', hidden: true });
  const node = h('div', { class: 'answer-attachments' }, strip, refused);

  function render() {
    strip.replaceChildren(...pictures.map((picture, i) => {
      const name = pictures.length > 1 ? t('image-numbered', { label, number: i + 1, count: pictures.length }) : label;
      const src = dataUrl(picture);
      const thumb = h('button', { type: 'button', class: 'image-thumb', 'aria-label': t('image-enlarge', { name }) },
        h('img', { src, alt: name }));
      thumb.addEventListener('click', (e) => { e.preventDefault(); e.stopPropagation(); enlarge(src, name); });
      const remove = h('button', { type: 'button', class: 'link picture-remove', 'aria-label': t('image-remove-aria', { name }) }, t('image-remove'));
      remove.addEventListener('click', (e) => {
        e.preventDefault();
        e.stopPropagation();
        pictures = pictures.filter((p) => p !== picture);
        render();
        onChange();
        box.focus();
      });
      return h('span', { class: 'answer-picture' }, thumb, remove);
    }));
    strip.hidden = !pictures.length;
  }

  // Pastes and drops are taken one after another, so pictures show in the order given even when a
  // large one takes the backend longer than a small one after it.
  let taking = Promise.resolve();
  function take(files) {
    taking = taking.then(() => takeNow(files)).catch(() => {});
  }

  async function takeNow(files) {
    let problem = null;
    for (const file of files) {
      try {
        const picture = await api.attachImage(request, await base64Of(file));
        if (dataUrl(picture)) pictures.push(picture);
      } catch (error) {
        problem = errorText(error);
      }
    }
    refused.textContent = problem || '';
    refused.hidden = !problem;
    render();
    onChange();
  }

  const filesOf = (transfer) => (transfer && transfer.files ? [...transfer.files] : []);
  box.addEventListener('paste', (e) => {
    const files = filesOf(e.clipboardData);
    // Text pastes as usual; only files are taken as pictures.
    if (!files.length) return;
    e.preventDefault();
    take(files);
  });
  box.addEventListener('dragover', (e) => {
    if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) e.preventDefault();
  });
  box.addEventListener('drop', (e) => {
    const files = filesOf(e.dataTransfer);
    if (!files.length) return;
    e.preventDefault();
    take(files);
  });

  if (restoring.length) {
    Promise.all(restoring.map((n) => api.keptPicture(request, n).then(
      (image) => (dataUrl(image) ? { ...image, picture: n } : null), () => null)))
      .then((back) => {
        // Put back before any pasted since, unless they were cleared meanwhile.
        if (!restoring.length) return;
        restoring = [];
        pictures = [...back.filter(Boolean), ...pictures];
        render();
        onChange();
      });
  }

  return {
    node,
    images: () => pictures.map((p) => ({ mime: p.mime, data: p.data })),
    kept: () => [...pictures.map((p) => p.picture).filter(Number.isInteger), ...restoring],
    count: () => pictures.length,
    /** Takes every picture off, without telling `onChange` (the caller redraws). */
    clear() { pictures = []; restoring = []; refused.hidden = true; render(); },
  };
}
