// The phone page's service worker: makes the page installable (a PWA) and shows the desk's Web
// Push notices (docs/remote.md, "Waking the phone"). It caches nothing: every request and answer
// goes to the desk, so a stale copy can never show a question that is gone.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

/**
 * What the lock screen says for a notice `{ title, body, summary, tag, class, waiting, answered }`:
 * a request's own text only for a text and choice request (the desk sends it only when the person
 * chose so); for anything else, whatever the body holds, only the desk's `summary`, which says in
 * the desk's language that an agent waits or that the request was answered on the desk.
 */
function lockScreenText(notice) {
  const summary = typeof notice.summary === 'string' ? notice.summary : '';
  if (notice.answered === true) return summary;
  if (notice.class === 'text-and-choices' && typeof notice.body === 'string' && notice.body) return notice.body;
  return summary;
}

async function show(event) {
  let notice = {};
  try {
    notice = (event.data && event.data.json()) || {};
  } catch (e) {
    notice = {};
  }
  const tag = typeof notice.tag === 'string' && notice.tag ? notice.tag : 'askdesk';
  const body = lockScreenText(notice);
  // The same tag replaces the request's earlier notice; only a new request rings again.
  await self.registration.showNotification('askdesk', {
    body, tag, icon: '/icon.svg', renotify: notice.answered !== true, data: { url: '/' },
  });
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) client.postMessage({ type: 'notified', tag, body });
}

self.addEventListener('push', (event) => event.waitUntil(show(event)));

// A tap on a notice brings the page forward, or opens it.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
    if (open) return open.focus();
    return self.clients.openWindow('/');
  })());
});
