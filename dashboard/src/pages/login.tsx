// Login with POST /auth/login; says why the previous session ended (expired, logged out).
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { session, useSession } from '../auth/session';
import { Field, FormError } from '../components/field';
import { pendingInvitation } from './join';

export function LoginPage() {
  const { notice, orgId } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const body = { email: String(form.get('email')), password: String(form.get('password')) };
      const { access_token, user } = await unwrap(api.POST('/auth/login', { body }));
      // The organization chosen last time, while the user still belongs to it; else their first.
      const organization = user.organizations.find((org) => org.id === orgId) ?? user.organizations[0];
      queryClient.clear();
      queryClient.setQueryData(['me', access_token], user);
      session.login(access_token, organization?.id);
      // Logging in to accept an invitation leads back to it.
      await navigate({ to: pendingInvitation() ? '/join' : '/projects' });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <h1>Herald</h1>
      <form onSubmit={(event) => void submit(event)} className="card" aria-labelledby="login-title">
        <h2 id="login-title">Log in</h2>
        {notice && (
          <p role="status" className="notice">
            {notice}
          </p>
        )}
        <Field label="Email" field="email" error={error} type="email" autoComplete="username" required />
        <Field label="Password" field="password" error={error} type="password" autoComplete="current-password" required />
        <FormError error={error} fields={['email', 'password']} />
        <button type="submit" className="primary" disabled={busy}>
          Log in
        </button>
        <p>
          <Link to="/forgot">Forgot your password?</Link>
        </p>
      </form>
    </main>
  );
}
