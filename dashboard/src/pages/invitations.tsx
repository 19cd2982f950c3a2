// Invitations on the members page: invite an address with a role (emailed when a project can send; the link shown once
// either way), list and revoke open ones.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { type Role } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FormError, SelectField } from '../components/field';
import { dateTime, everyValue } from '../components/format';
import { QueryState } from '../components/query-state';
import { ShownOnceDialog } from '../components/shown-once';

const ROLES = everyValue<Role>()('OWNER', 'ADMIN', 'MEMBER', 'VIEWER');

/** Only an OWNER may invite an OWNER: the others are not offered what the server would refuse. */
export function InviteMember({ myRole }: { myRole: Role | undefined }) {
  const queryClient = useQueryClient();
  const [issued, setIssued] = useState<Schemas['IssuedInvitation']>();
  const invite = useMutation({
    mutationFn: (body: { email: string; role: Role }) => unwrap(api.POST('/invitations', { body })),
    onSuccess: (invitation) => {
      setIssued(invitation);
      void queryClient.invalidateQueries({ queryKey: ['invitations'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    invite.mutate({ email: String(form.get('email')), role: form.get('role') as Role });
    event.currentTarget.reset();
  };
  return (
    <>
      <form className="card inline" onSubmit={submit} aria-label="Invite a member">
        <Field label="Email" field="email" error={invite.error} type="email" required maxLength={320} placeholder="teammate@example.com" />
        <SelectField label="Role" field="role" error={invite.error} defaultValue="MEMBER">
          {ROLES.filter((role) => role !== 'OWNER' || myRole === 'OWNER').map((role) => (
            <option key={role}>{role}</option>
          ))}
        </SelectField>
        <button type="submit" className="primary" disabled={invite.isPending}>
          Invite
        </button>
        <FormError error={invite.error} fields={['email', 'role']} />
      </form>
      <ShownOnceDialog
        secret={issued?.acceptUrl}
        title={`Invitation for ${issued?.email ?? ''} (${issued?.role ?? ''})`}
        warning={`${issued?.emailed ? 'The invitee has it by email; you may also hand it over yourself.' : 'Send this link to the invitee.'} It is shown once, works once and expires ${issued ? dateTime(issued.expiresAt) : ''}; inviting the address again makes a new one.`}
        copyLabel="Copy link"
        testId="invitation-link"
        onClose={() => setIssued(undefined)}
      >
        {issued &&
          (issued.emailed ? (
            <p role="status" className="success">
              Invitation emailed to {issued.email} from {issued.emailedFrom}.
            </p>
          ) : (
            <p role="status" className="notice">
              Not emailed: {issued.emailProblem} Copy the link above and send it to {issued.email} yourself.
            </p>
          ))}
      </ShownOnceDialog>
    </>
  );
}

export function PendingInvitations() {
  const queryClient = useQueryClient();
  const invitations = useQuery({
    queryKey: ['invitations'],
    queryFn: () => unwrap(api.GET('/invitations', { params: { query: { pageSize: 100 } } })),
  });
  const revoke = (id: string) =>
    unwrap(api.DELETE('/invitations/{id}', { params: { path: { id } } })).then(() => queryClient.invalidateQueries({ queryKey: ['invitations'] }));
  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <QueryState query={invitations} isEmpty={(list) => list.total === 0} empty={<p>No open invitations.</p>}>
        {(list) => (
          <table>
            <caption className="visually-hidden">Open invitations</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((invitation) => (
                <tr key={invitation.id}>
                  <td>{invitation.email}</td>
                  <td>{invitation.role}</td>
                  <td>{invitation.status}</td>
                  <td>{dateTime(invitation.expiresAt)}</td>
                  <td>
                    <Confirm
                      trigger="Revoke"
                      label={`Revoke the invitation of ${invitation.email}`}
                      title={`Revoke the invitation of ${invitation.email}?`}
                      description="Its link stops working at once."
                      confirm="Revoke invitation"
                      onConfirm={() => revoke(invitation.id)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryState>
    </section>
  );
}
