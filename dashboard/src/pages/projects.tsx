// Projects of the organization: list, and create (OWNER or ADMIN).
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { useMembership } from '../auth/me';
import { Field, FormError } from '../components/field';
import { dateTime } from '../components/format';
import { Pagination } from '../components/pagination';
import { QueryState } from '../components/query-state';

export function ProjectsPage() {
  const [page, setPage] = useState(1);
  const { isAdmin } = useMembership();
  const projects = useQuery({
    queryKey: ['projects', page],
    queryFn: () => unwrap(api.GET('/projects', { params: { query: { page, pageSize: 20 } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <section>
      <h1>Projects</h1>
      {isAdmin && <CreateProject />}
      <QueryState query={projects} isEmpty={(list) => list.total === 0} empty={<p>No projects yet.</p>}>
        {(list) => (
          <>
            <table>
              <caption className="visually-hidden">Projects</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Id</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((project) => (
                  <tr key={project.id}>
                    <td>
                      <Link to="/projects/$projectId/overview" params={{ projectId: project.id }}>
                        {project.name}
                      </Link>
                    </td>
                    <td>
                      <code>{project.id}</code>
                    </td>
                    <td>{dateTime(project.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination page={list.page} pageSize={list.pageSize} total={list.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function CreateProject() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const create = useMutation({
    mutationFn: (name: string) => unwrap(api.POST('/projects', { body: { name } })),
    onSuccess: async (project) => {
      await queryClient.invalidateQueries({ queryKey: ['projects'] });
      await navigate({ to: '/projects/$projectId/overview', params: { projectId: project.id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    create.mutate(String(new FormData(event.currentTarget).get('name')));
  };
  return (
    <form className="card inline" onSubmit={submit} aria-label="New project">
      <Field label="New project name" field="name" error={create.error} required maxLength={200} />
      <button type="submit" className="primary" disabled={create.isPending}>
        Create project
      </button>
      <FormError error={create.error} fields={['name']} />
    </form>
  );
}
