// askdesk UI: the page's words in the app's language. The backend sends ui.ftl in that language and
// in English (the same catalogues the CLI and the notifications use); Fluent's own implementation
// (ui/vendor/fluent-bundle) formats them, a message the language lacks coming from English. The
// phone's page loads this same module, served by the remote with phone.ftl in the desk's language.
import { FluentBundle, FluentResource } from './vendor/fluent-bundle/index.js';

let catalogues = [];
let language = 'en';

// Where each entry of a catalogue begins: its identifier (a term's with `-`) at the start of a line.
const ENTRY = /^(-?[a-zA-Z][\w-]*) *=/gm;
// The terms and messages a pattern names (`{ -brand }`, `{ other-message }`); a function's name
// (`NUMBER(...)`) is no entry and is passed over.
const REFERENCE = /\{\s*(-?[a-zA-Z][\w-]*)/g;

/**
 * One catalogue's text, cut into its entries now and each entry parsed by Fluent the first time it is
 * asked for, with the terms and messages it names: a window built for a question formats a few dozen
 * of the catalogue's hundreds of messages before it draws, and parses only those. No isolation marks:
 * agents' text goes in its own element with dir="auto".
 */
function catalogueOf(locale, source) {
  const bundle = new FluentBundle(locale, { useIsolating: false });
  const starts = [...source.matchAll(ENTRY)];
  const entries = new Map(starts.map((m, i) => [m[1], [m.index, i + 1 < starts.length ? starts[i + 1].index : source.length]]));
  return { locale, source, bundle, entries };
}

/** Parses entry `id` of `catalogue` into its bundle unless it was, then what it names. */
function load(catalogue, id) {
  const span = catalogue.entries.get(id);
  if (!span) return;
  catalogue.entries.delete(id);
  const text = catalogue.source.slice(span[0], span[1]);
  const errors = catalogue.bundle.addResource(new FluentResource(text));
  if (errors.length) console.warn(`askdesk: ${catalogue.locale} catalogue:`, errors);
  for (const [, named] of text.matchAll(REFERENCE)) load(catalogue, named);
}

/** Message `id` of `catalogue` (parsed now if it was not), or undefined when it has none. */
function messageOf(catalogue, id) {
  load(catalogue, id);
  return catalogue.bundle.getMessage(id);
}

/** Speaks the catalogue `view` (`get_catalogue`, `set_language`) from now on, and marks the page's language. */
export function useCatalogue(view) {
  language = view.language;
  catalogues = [catalogueOf(view.language, view.source)];
  if (view.language !== 'en') catalogues.push(catalogueOf('en', view.fallback));
  document.documentElement.lang = view.language;
}

/** The language in force, a BCP 47 tag for `Intl`. */
export function locale() {
  return language;
}

function find(id, attribute) {
  for (const catalogue of catalogues) {
    const message = messageOf(catalogue, id);
    const pattern = message && (attribute ? message.attributes[attribute] : message.value);
    if (pattern) return { bundle: catalogue.bundle, pattern };
  }
  return null;
}

/** Message `id` with `args` (numbers select plurals); the id itself when no catalogue has it. */
export function t(id, args) {
  const found = find(id);
  return found ? found.bundle.formatPattern(found.pattern, args) : id;
}

/** Attribute `attribute` (`title`, `aria-label`, `placeholder`) of message `id`. */
export function tAttr(id, attribute, args) {
  const found = find(id, attribute);
  return found ? found.bundle.formatPattern(found.pattern, args) : `${id}.${attribute}`;
}

/**
 * Puts the words of every `[data-l10n-id]` element under `root` in: the message's value as the text of an
 * element with no element children, each of its attributes as the attribute of that name.
 */
export function translate(root = document) {
  for (const el of root.querySelectorAll('[data-l10n-id]')) {
    const id = el.dataset.l10nId;
    for (const catalogue of catalogues) {
      const message = messageOf(catalogue, id);
      if (!message) continue;
      const { bundle } = catalogue;
      if (message.value && el.children.length === 0) el.textContent = bundle.formatPattern(message.value);
      for (const [name, pattern] of Object.entries(message.attributes)) el.setAttribute(name, bundle.formatPattern(pattern));
      break;
    }
  }
}
