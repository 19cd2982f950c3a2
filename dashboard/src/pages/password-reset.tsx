// A forgotten password: ask for a reset link by email (`/forgot`), then choose a new password with it (`/reset?token=…`).
import { Link, useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../api/client';
import { Field, FormError } from '../components/field';

export function ForgotPasswordPage() {
  const [sentTo, setSentTo] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget).get('email')).trim();
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(api.POST('/auth/password-reset', { body: { email } }));
      setSentTo(email);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <h1>Herald</h1>
      <section className="card" aria-labelledby="forgot-title">
        <h2 id="forgot-title">Forgot your password?</h2>
        {sentTo ? (
          <>
            <p role="status">
              If an account uses <strong>{sentTo}</strong>, a link to choose a new password is on its way. It works once, for an hour. No email after a
              few minutes? Check your spam folder, or ask an admin of your organization: Herald sends it through a project that has an email provider and
              a verified sending domain.
            </p>
            <p>
              <Link to="/login">Back to log in</Link>
            </p>
          </>
        ) : (
          <form onSubmit={(event) => void submit(event)} aria-label="Ask for a reset link">
            <p>Enter the email address of your account: we will email you a link to choose a new password.</p>
            <Field label="Email" field="email" error={error} type="email" autoComplete="username" required maxLength={320} />
            <FormError error={error} fields={['email']} />
            <button type="submit" className="primary" disabled={busy}>
              Email me a reset link
            </button>
            <p>
              <Link to="/login">Back to log in</Link>
            </p>
          </form>
        )}
      </section>
    </main>
  );
}

export function resetSearch(search: Record<string, unknown>): { token?: string } {
  return typeof search.token === 'string' && search.token !== '' ? { token: search.token } : {};
}

export function ResetPasswordPage() {
  const { token } = useSearch({ from: '/reset' });
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>();
  const [mismatch, setMismatch] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!token) return;
    const form = new FormData(event.currentTarget);
    const password = String(form.get('password'));
    setError(undefined);
    setMismatch(password !== String(form.get('confirm')));
    if (password !== String(form.get('confirm'))) return;
    setBusy(true);
    try {
      await unwrap(api.POST('/auth/password-reset/confirm', { body: { token, password } }));
      setDone(true);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const invalid = error instanceof ApiError && error.code === 'reset_token_invalid';
  return (
    <main className="login">
      <h1>Herald</h1>
      <section className="card" aria-labelledby="reset-title">
        <h2 id="reset-title">Choose a new password</h2>
        {done ? (
          <p role="status" className="success">
            Your password is changed. <Link to="/login">Log in</Link> with the new one.
          </p>
        ) : !token ? (
          <p role="alert" className="error">
            This page needs the link from the reset email. Open the whole link, or <Link to="/forgot">ask for a new one</Link>.
          </p>
        ) : invalid ? (
          <p role="alert" className="error">
            This reset link is no longer valid: it expired, was already used, or a newer one was sent. <Link to="/forgot">Ask for a new link</Link>.
          </p>
        ) : (
          <form onSubmit={(event) => void submit(event)} aria-label="Set a new password">
            <Field label="New password" field="password" error={error} type="password" required minLength={8} maxLength={1024} autoComplete="new-password" hint="At least 8 characters." />
            <Field
              label="New password again"
              field="confirm"
              error={mismatch ? new ApiError(422, 'validation_failed', 'Validation failed', [{ field: 'confirm', error: 'does not match the new password' }]) : undefined}
              type="password"
              required
              autoComplete="new-password"
            />
            <FormError error={error} fields={['password']} />
            <button type="submit" className="primary" disabled={busy}>
              Set new password
            </button>
          </form>
        )}
      </section>
    </main>
  );
}
