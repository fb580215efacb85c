// The phone page's service worker: makes the page installable (a PWA). It caches nothing: every
// request and answer goes to the desk, so a stale copy can never show a question that is gone.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
