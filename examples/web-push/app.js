// The example page: Herald.init on load, subscribe and unsubscribe on a click, identify from the form.
const status = document.getElementById('status');
const show = (text) => (status.textContent = text);
const describe = (result, done) => (result.error ? `${result.error.code}: ${result.error.message}` : done(result.data));

Herald.init({ ...window.HERALD_CONFIG, serviceWorkerPath: '/herald-sw.js' }).then((result) => {
  if (!Herald.isPushSupported()) return show('This browser cannot receive web push (on iOS, add the site to the home screen first).');
  show(describe(result, (data) => (data.subscribed ? 'Subscribed.' : `Not subscribed (permission: ${Herald.permission()}).`)));
});
Herald.on('click', (click) => show(`Notification clicked: ${click.url ?? 'no URL'}`));

document.getElementById('subscribe').addEventListener('click', async () => {
  show('Subscribing…');
  show(describe(await Herald.subscribe(), (subscriber) => `Subscribed as ${subscriber.id}.`));
});
document.getElementById('unsubscribe').addEventListener('click', async () => {
  show(describe(await Herald.unsubscribe(), () => 'Unsubscribed.'));
});
document.getElementById('identify').addEventListener('submit', async (event) => {
  event.preventDefault();
  const externalId = new FormData(event.target).get('externalId');
  show(describe(await Herald.identify(String(externalId)), () => `Identified as ${externalId}.`));
});
