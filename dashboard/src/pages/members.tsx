// Members of the organization: invited, given roles and removed by an OWNER or ADMIN; the last OWNER stays.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMe, useMembership, type Role } from '../auth/me';
import { Confirm } from '../components/confirm';
import { dateTime, everyValue } from '../components/format';
import { Pagination } from '../components/pagination';
import { ErrorMessage, QueryState } from '../components/query-state';
import { InviteMember, PendingInvitations } from './invitations';

const ROLES = everyValue<Role>()('OWNER', 'ADMIN', 'MEMBER', 'VIEWER');

export function MembersPage() {
  const [page, setPage] = useState(1);
  const { isAdmin, role } = useMembership();
  const members = useQuery({
    queryKey: ['members', page],
    queryFn: () => unwrap(api.GET('/members', { params: { query: { page, pageSize: 50 } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <section>
      <h1>Members</h1>
      {isAdmin ? <InviteMember myRole={role} /> : <p className="notice">Only an owner or admin can invite members, change roles or remove members.</p>}
      <QueryState query={members} isEmpty={(list) => list.total === 0} empty={<p>No members.</p>}>
        {(list) => {
          // With every member on this page, the only OWNER's controls are disabled; otherwise the server's 409 says it.
          const owners = list.data.filter((member) => member.role === 'OWNER').length;
          const lastOwner = list.total <= list.data.length && owners === 1;
          return (
            <>
              <table>
                <caption className="visually-hidden">Members</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Since</th>
                    {isAdmin && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((member) => (
                    <MemberRow key={member.userId} member={member} isAdmin={isAdmin} locked={lastOwner && member.role === 'OWNER'} />
                  ))}
                </tbody>
              </table>
              <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} />
            </>
          );
        }}
      </QueryState>
      {isAdmin && <PendingInvitations />}
    </section>
  );
}

function MemberRow({ member, isAdmin, locked }: { member: Schemas['Member']; isAdmin: boolean; locked: boolean }) {
  const queryClient = useQueryClient();
  const me = useMe();
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: ['members'] });
    // Changing one's own role changes what this dashboard lets one do.
    if (member.userId === me.data?.id) await queryClient.invalidateQueries({ queryKey: ['me'] });
  };
  const changeRole = useMutation({
    mutationFn: (role: Role) => unwrap(api.PATCH('/members/{userId}', { params: { path: { userId: member.userId } }, body: { role } })),
    onSuccess: refresh,
  });
  const remove = async () => {
    await unwrap(api.DELETE('/members/{userId}', { params: { path: { userId: member.userId } } }));
    await refresh();
  };
  return (
    <tr>
      <td>{member.name}</td>
      <td>{member.email}</td>
      <td>
        {isAdmin ? (
          <>
            <select
              aria-label={`Role of ${member.email}`}
              value={member.role}
              disabled={locked || changeRole.isPending}
              title={locked ? 'The last owner keeps the OWNER role' : undefined}
              onChange={(event) => changeRole.mutate(event.target.value as Role)}
            >
              {ROLES.map((role) => (
                <option key={role}>{role}</option>
              ))}
            </select>
            <ErrorMessage error={changeRole.error} />
          </>
        ) : (
          member.role
        )}
      </td>
      <td>{dateTime(member.createdAt)}</td>
      {isAdmin && (
        <td>
          <Confirm
            trigger="Remove"
            label={`Remove ${member.email}`}
            title={`Remove ${member.email}?`}
            description="They lose access to this organization and its projects at once."
            confirm="Remove member"
            disabled={locked}
            onConfirm={remove}
          />
          {locked && <span className="hint"> The last owner cannot be removed.</span>}
        </td>
      )}
    </tr>
  );
}
