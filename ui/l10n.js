// askdesk UI: the page's words in the app's language. The backend sends ui.ftl in that language and
// in English (the same catalogues the CLI and the notifications use); Fluent's own implementation
// (ui/vendor/fluent-bundle) formats them, a message the language lacks coming from English. The
// phone's page loads this same module, served by the remote with phone.ftl in the desk's language.
import { FluentBundle, FluentResource } from './vendor/fluent-bundle/index.js';

let bundles = [];
let language = 'en';

/** A bundle of one catalogue's text. No isolation marks: agents' text goes in its own element with dir="auto". */
function bundleOf(locale, source) {
  const bundle = new FluentBundle(locale, { useIsolating: false });
  const errors = bundle.addResource(new FluentResource(source));
  if (errors.length) console.warn(`askdesk: ${locale} catalogue:`, errors);
  return bundle;
}

/** Speaks the catalogue `view` (`get_catalogue`, `set_language`) from now on, and marks the page's language. */
export function useCatalogue(view) {
  language = view.language;
  bundles = [bundleOf(view.language, view.source)];
  if (view.language !== 'en') bundles.push(bundleOf('en', view.fallback));
  document.documentElement.lang = view.language;
}

/** The language in force, a BCP 47 tag for `Intl`. */
export function locale() {
  return language;
}

function find(id, attribute) {
  for (const bundle of bundles) {
    const message = bundle.getMessage(id);
    const pattern = message && (attribute ? message.attributes[attribute] : message.value);
    if (pattern) return { bundle, pattern };
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
    for (const bundle of bundles) {
      const message = bundle.getMessage(id);
      if (!message) continue;
      if (message.value && el.children.length === 0) el.textContent = bundle.formatPattern(message.value);
      for (const [name, pattern] of Object.entries(message.attributes)) el.setAttribute(name, bundle.formatPattern(pattern));
      break;
    }
  }
}
