// askdesk UI: the images agents attach to questions, options and plans (protocol 1.4), shown inline
// and enlarged on a click. Only re-encoded PNGs are shown, as data: URLs; anything else is left out.

import { h } from './dom.js';

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
export function imageStrip(images, label = 'Image') {
  const urls = (images || []).map(dataUrl).filter(Boolean);
  if (!urls.length) return null;
  return h('div', { class: 'image-strip' }, urls.map((src, i) => {
    const name = urls.length > 1 ? `${label} ${i + 1} of ${urls.length}` : label;
    const button = h('button', { type: 'button', class: 'image-thumb', 'aria-label': `${name}: enlarge` },
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
