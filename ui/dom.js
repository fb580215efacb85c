// askdesk UI: small DOM helpers. Every string goes in as text; nothing here parses HTML.
import { t, locale } from './l10n.js';

/** Creates an element; `props` become attributes (`class`, `text`, `on<event>` handled), children are nodes or text. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** "just now", "4 min", "2 h 5 min", "3 days". */
export function waited(sinceMillis, now = Date.now()) {
  const seconds = Math.max(0, Math.round((now - sinceMillis) / 1000));
  if (seconds < 45) return t('waited-just-now');
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return t('waited-minutes', { minutes });
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? t('waited-hours-minutes', { hours, minutes: minutes % 60 }) : t('waited-hours', { hours });
  return t('waited-days', { days: Math.round(hours / 24) });
}

/**
 * A label without its "(Recommended)" suffix, for display only (the answer keeps the label). Mirrors
 * `QuestionOption::is_recommended` in askdesk-core, the rule the backend uses.
 */
export function displayLabel(label) {
  return label.replace(/\s*\(Recommended\)\s*$/, '');
}

/** How many calendar days before `now` the day of `millis` was, in local time (0: the same day). */
export function daysAgo(millis, now = new Date()) {
  const day = new Date(millis);
  const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate());
  return Math.round((midnight(now) - midnight(day)) / 86400000);
}

/** A past day in a sentence: "today", "yesterday", else "on 3 Dec", with the year only when it is not this one. */
export function onDay(millis, now = new Date()) {
  const ago = daysAgo(millis, now);
  if (ago === 0) return t('day-today');
  if (ago === 1) return t('day-yesterday');
  const day = new Date(millis);
  return t('day-on', { date: day.toLocaleDateString(locale(), {
    day: 'numeric', month: 'short', year: day.getFullYear() === now.getFullYear() ? undefined : 'numeric',
  }) });
}

/** A local date and time, short. */
export function when(millis) {
  const d = new Date(millis);
  return d.toLocaleString(locale(), { dateStyle: 'medium', timeStyle: 'short' });
}

/** What a failed call says: its message, or the thrown value as text. */
export function errorText(error) {
  return (error && error.message) || String(error);
}

/** A string meta value, or null. */
export function metaText(meta, key) {
  const v = meta && meta[key];
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}
