// Accepting an invitation (`/app/join#token=…`): signed in as the invited address, or creating the account with it.
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../api/client';
import type { paths } from '../api/schema';
import { session, useSession } from '../auth/session';
import { Field, FormError } from '../components/field';

const PENDING = 'herald.invitation';

/**
 * The secret of the invitation being accepted. It arrives in the fragment (never sent to a server) and is kept for
 * this tab only, so a detour through the login page comes back to it; the address bar no longer shows it.
 */
export function pendingInvitation(): string | undefined {
  const fromLink = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (fromLink) {
    sessionStorage.setItem(PENDING, fromLink);
    history.replaceState(history.state, '', window.location.pathname + window.location.search);
  }
  return sessionStorage.getItem(PENDING) ?? undefined;
}

type Accepted = paths['/invitations/accept']['post']['responses'][200]['content']['application/json'];

function refusal(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 404) return 'This invitation link is not valid. Ask for a new one.';
  if (error.status === 410) return `This invitation can no longer be used: ${error.message}. Ask for a new one.`;
  if (error.status === 403) return `${error.message}. Log out and log in as the invited address to accept it.`;
  return undefined;
}

export function JoinPage() {
  const { token: signedIn } = useSession();
  const [invitation] = useState(pendingInvitation);
  const [accepted, setAccepted] = useState<Accepted>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const navigate = useNavigate();
  const queryClient = useQueryClient();

  const accept = async (account?: { name: string; password: string }) => {
    if (!invitation) return;
    setBusy(true);
    setError(undefined);
    try {
      const result = await unwrap(api.POST('/invitations/accept', { body: { token: invitation, ...account } }));
      sessionStorage.removeItem(PENDING);
      if (account) {
        const { access_token } = await unwrap(api.POST('/auth/login', { body: { email: result.user.email, password: account.password } }));
        session.login(access_token, result.organization.id);
      } else {
        session.selectOrganization(result.organization.id);
      }
      await queryClient.invalidateQueries({ queryKey: ['me'] });
      setAccepted(result);
    } catch (failure) {
      // A link that will never work is not kept for the next login.
      if (failure instanceof ApiError && (failure.status === 404 || failure.status === 410)) sessionStorage.removeItem(PENDING);
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const createAccount = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void accept({ name: String(form.get('name')), password: String(form.get('password')) });
  };

  const signInRequired = error instanceof ApiError && error.code === 'sign_in_required';
  const refused = refusal(error);
  return (
    <main className="login">
      <h1>Herald</h1>
      <section className="card" aria-labelledby="join-title">
        <h2 id="join-title">Join an organization</h2>
        {accepted ? (
          <>
            <p role="status">
              You joined <strong>{accepted.organization.name}</strong> as {accepted.organization.role}.
            </p>
            <button type="button" className="primary" onClick={() => void navigate({ to: '/projects' })}>
              Go to its projects
            </button>
          </>
        ) : !invitation ? (
          <p role="alert" className="error">
            This page needs the invitation link you were sent. Open the whole link, or ask for a new one.
          </p>
        ) : refused ? (
          <p role="alert" className="error">
            {refused}
          </p>
        ) : signedIn ? (
          <>
            <p>You have been invited to an organization on Herald. Accepting adds you to it with the role you were invited with.</p>
            <FormError error={error} fields={[]} />
            <button type="button" className="primary" disabled={busy} onClick={() => void accept()}>
              Accept the invitation
            </button>
          </>
        ) : signInRequired ? (
          <p role="alert" className="notice">
            An account already exists for the invited address. <Link to="/login">Log in</Link> with it to accept the invitation.
          </p>
        ) : (
          <form onSubmit={createAccount} aria-label="Create your account">
            <p>
              You have been invited to an organization on Herald. Create your account to join it, or <Link to="/login">log in</Link> if you already
              have one.
            </p>
            <Field label="Your name" field="name" error={error} required maxLength={200} autoComplete="name" />
            <Field label="Password" field="password" error={error} type="password" required minLength={8} autoComplete="new-password" />
            <FormError error={error} fields={['name', 'password']} />
            <button type="submit" className="primary" disabled={busy}>
              Create account and join
            </button>
          </form>
        )}
      </section>
    </main>
  );
}
