// "Send a test to this browser": subscribes the dashboard's browser to the project's push and pushes the notification
// as composed to it alone, through POST /projects/{projectId}/push/test: no campaign, and the browser joins no audience.
import { useMutation } from '@tanstack/react-query';
import { api, ApiError, unwrap, type Body } from '../api/client';
import { errorText } from '../components/query-state';

type Notification = Body<'/projects/{projectId}/push/test', 'post'>['notification'];

/**
 * The SDK's service worker (it shows Herald's pushes), registered under a scope of its own within /sdk/ — a scope no
 * page lives at, so it controls no page of the dashboard nor of the customer's site.
 */
const WORKER = '/sdk/herald-sw.js';
const SCOPE = '/sdk/dashboard-test/';

/** A problem the person can act on, said in words. */
class Refusal extends Error {}

function fromBase64url(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function sameKey(a: ArrayBuffer | null | undefined, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.byteLength) return false;
  const bytes = new Uint8Array(a);
  return bytes.every((byte, i) => byte === b[i]);
}

async function activeRegistration(): Promise<ServiceWorkerRegistration> {
  const registration = await navigator.serviceWorker.register(WORKER, { scope: SCOPE });
  const worker = registration.installing ?? registration.waiting;
  if (worker && !registration.active) {
    await new Promise<void>((resolve) => worker.addEventListener('statechange', () => worker.state === 'activated' && resolve()));
  }
  return registration;
}

/** This browser's push subscription to the project (its VAPID public key), made once and kept for later tests. */
async function subscribeThisBrowser(projectId: string): Promise<PushSubscriptionJSON> {
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    throw new Refusal('This browser cannot receive web push notifications here (a private window, or a browser without web push).');
  }
  const config = await api.GET('/projects/{id}/push-config', { params: { path: { id: projectId } } });
  if (!config.data) {
    throw new Refusal(
      config.response.status === 404 ? 'This project has no VAPID keys, so it cannot push: create its push configuration first.' : 'The project’s push configuration could not be read.',
    );
  }
  const permission = await Notification.requestPermission();
  if (permission === 'denied') {
    throw new Refusal('This browser blocks notifications from Herald. Allow them in the site settings (the icon beside the address), then try again.');
  }
  if (permission !== 'granted') throw new Refusal('Notifications were not allowed: answer “Allow” when the browser asks, then try again.');
  const registration = await activeRegistration();
  const key = fromBase64url(config.data.vapidPublicKey);
  let subscription = await registration.pushManager.getSubscription();
  // Subscribed before with another project's key: this project's pushes need its own.
  if (subscription && !sameKey(subscription.options.applicationServerKey, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  try {
    subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  } catch (error) {
    throw new Refusal(`The browser could not subscribe to push: ${error instanceof Error ? error.message : String(error)}`);
  }
  return subscription.toJSON();
}

function outcomeText(error: unknown): string {
  if (error instanceof Refusal) return error.message;
  if (error instanceof ApiError && error.status === 422) {
    return `The notification cannot be sent as it is: ${(error.details ?? []).map((d) => `${d.field.replace(/^notification\.?/, '') || 'the whole push'} ${d.error}`).join('; ')}.`;
  }
  return errorText(error);
}

export function PushTestButton({ projectId, notification }: { projectId: string; notification: Notification }) {
  const send = useMutation({
    mutationFn: async () => {
      const subscription = await subscribeThisBrowser(projectId);
      const { endpoint = '', keys } = subscription;
      const outcome = await unwrap(
        api.POST('/projects/{projectId}/push/test', {
          params: { path: { projectId } },
          body: { subscription: { endpoint, keys: { p256dh: keys?.p256dh ?? '', auth: keys?.auth ?? '' } }, notification },
        }),
      );
      // A subscription the push service refuses (expired, revoked) is dropped: the next test subscribes afresh.
      if (outcome.status === 'failed') await (await navigator.serviceWorker.getRegistration(SCOPE))?.pushManager.getSubscription().then((s) => s?.unsubscribe());
      return outcome;
    },
  });
  const ready = notification.title.trim() !== '' && notification.body.trim() !== '';
  return (
    <div className="push-test">
      <button type="button" disabled={!ready || send.isPending} onClick={() => send.mutate()}>
        {send.isPending ? 'Sending…' : 'Send a test to this browser'}
      </button>
      <p className="hint">
        {ready ? 'Shows this notification here, as composed. No campaign is made and this browser does not join the audience.' : 'Write a title and a body first.'}
      </p>
      {send.isSuccess &&
        (send.data.status === 'sent' ? (
          <p role="status">Sent to this browser: the notification appears in a moment.</p>
        ) : (
          <p role="alert" className="error">
            The push service refused it ({send.data.providerCode ?? send.data.reason}). This browser’s subscription was dropped: press the button again to subscribe afresh.
          </p>
        ))}
      {send.isError && (
        <p role="alert" className="error">
          {outcomeText(send.error)}
        </p>
      )}
    </div>
  );
}
