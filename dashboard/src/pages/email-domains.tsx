// Sending domains of a project: add one (OWNER/ADMIN), the DNS records to publish with copy buttons, verify, delete.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { useMembership } from '../auth/me';
import { Confirm } from '../components/confirm';
import { Field, FormError } from '../components/field';
import { dateTime } from '../components/format';
import { ErrorMessage, QueryState } from '../components/query-state';

type EmailDomain = Schemas['EmailDomain'];
type DnsRecord = Schemas['DnsRecord'];

const PURPOSE: Record<DnsRecord['purpose'], string> = {
  dkim: 'DKIM (RSA)',
  dkim_ed25519: 'DKIM (Ed25519)',
  ownership: 'Ownership',
  spf: 'SPF',
  dmarc: 'DMARC',
};

const STATUS: Record<EmailDomain['status'], string> = {
  pending: 'Publish the required records below, then verify. Nothing is sent from this domain until it is verified.',
  verified: 'Mail may be sent from this domain and its subdomains. Herald checks its records again every hour.',
  failing: 'Verified once, but its records are now missing or changed: nothing is sent from it until they are back.',
};

const PROBLEM: Record<EmailDomain['problems'][number]['problem'], string> = {
  missing: 'no TXT record found',
  wrong_value: 'no record with the expected value',
  lookup_failed: 'DNS gave no answer (try again later)',
};

export function EmailDomainsPage() {
  const { projectId } = useParams({ from: '/signed-in/projects/$projectId/domains' });
  const { canWrite, isAdmin } = useMembership();
  const domains = useQuery({
    queryKey: ['email-domains', projectId],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/email-domains', { params: { path: { projectId } } })),
  });
  return (
    <section aria-labelledby="domains-title">
      <h2 id="domains-title">Sending domains</h2>
      <p className="muted">
        Email is sent only from a verified domain (or a subdomain of one), signed with DKIM keys Herald generates for it. Publish the required records at
        your DNS provider, then verify; the SPF and DMARC records are recommended for delivery to Gmail, Yahoo and Microsoft.
      </p>
      {isAdmin && <AddDomain projectId={projectId} />}
      <QueryState query={domains} isEmpty={(list) => list.data.length === 0} empty={<p>No sending domains yet.</p>}>
        {(list) => (
          <>
            {list.data.map((domain) => (
              <DomainCard key={domain.id} domain={domain} canVerify={canWrite} canDelete={isAdmin} />
            ))}
          </>
        )}
      </QueryState>
    </section>
  );
}

function AddDomain({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const ed25519Id = useId();
  const add = useMutation({
    mutationFn: (body: { domain: string; ed25519: boolean }) =>
      unwrap(api.POST('/projects/{projectId}/email-domains', { params: { path: { projectId } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['email-domains', projectId] }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const target = event.currentTarget;
    const form = new FormData(target);
    add.mutate({ domain: String(form.get('domain')), ed25519: form.get('ed25519') === 'on' }, { onSuccess: () => target.reset() });
  };
  return (
    <form className="card inline" onSubmit={submit} aria-label="New sending domain" noValidate>
      <Field label="Domain" field="domain" error={add.error} required placeholder="example.com" />
      <div className="check">
        <input id={ed25519Id} type="checkbox" name="ed25519" />
        <label htmlFor={ed25519Id}>Also an Ed25519 key (a second DKIM signature)</label>
      </div>
      <button type="submit" className="primary" disabled={add.isPending}>
        {add.isPending ? 'Generating keys…' : 'Add domain'}
      </button>
      <FormError error={add.error} fields={['domain']} />
    </form>
  );
}

function DomainCard({ domain, canVerify, canDelete }: { domain: EmailDomain; canVerify: boolean; canDelete: boolean }) {
  const queryClient = useQueryClient();
  const titleId = useId();
  const queryKey = ['email-domains', domain.projectId];
  const path = { params: { path: { projectId: domain.projectId, domainId: domain.id } } };
  const verify = useMutation({
    mutationFn: () => unwrap(api.POST('/projects/{projectId}/email-domains/{domainId}/verify', path)),
    onSuccess: () => queryClient.invalidateQueries({ queryKey }),
  });
  const remove = () =>
    unwrap(api.DELETE('/projects/{projectId}/email-domains/{domainId}', path)).then(() => queryClient.invalidateQueries({ queryKey }));
  return (
    <article className="card" aria-labelledby={titleId}>
      <h3 id={titleId}>
        {domain.domain} <span className={`badge ${domain.status}`}>{domain.status}</span>
      </h3>
      <p>{STATUS[domain.status]}</p>
      <p className="muted">
        {domain.lastCheckedAt ? `Last checked ${dateTime(domain.lastCheckedAt)}.` : 'Not checked yet.'}
        {domain.verifiedAt && ` Verified ${dateTime(domain.verifiedAt)}.`}
      </p>
      {domain.problems.length > 0 && (
        <ul className="problems" aria-label={`What the last check found on ${domain.domain}`}>
          {domain.problems.map((problem) => (
            <li key={problem.name}>
              {PURPOSE[problem.record]} record <code>{problem.name}</code>: {PROBLEM[problem.problem]}
            </li>
          ))}
        </ul>
      )}
      <table className="records">
        <caption className="visually-hidden">DNS records of {domain.domain}</caption>
        <thead>
          <tr>
            <th scope="col">Record</th>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Check</th>
          </tr>
        </thead>
        <tbody>
          {domain.records.map((record) => (
            <tr key={record.purpose}>
              <th scope="row">{PURPOSE[record.purpose]}</th>
              <td>{record.type}</td>
              <td>
                <code>{record.name}</code> <CopyButton text={record.name} label={`name of the ${PURPOSE[record.purpose]} record`} />
              </td>
              <td>
                <code className="record-value">{record.value}</code>{' '}
                <CopyButton text={record.value} label={`value of the ${PURPOSE[record.purpose]} record`} />
              </td>
              <td>{record.checked ? 'required' : 'recommended'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="actions start">
        {canVerify && (
          <button type="button" className="primary" onClick={() => verify.mutate()} disabled={verify.isPending} aria-label={`Verify ${domain.domain}`}>
            {verify.isPending ? 'Checking…' : 'Verify'}
          </button>
        )}
        {canDelete && (
          <Confirm
            trigger="Delete"
            label={`Delete ${domain.domain}`}
            title={`Delete ${domain.domain}?`}
            description="Nothing is sent from it any more, and its DKIM keys are deleted: adding it again means publishing new records."
            confirm="Delete domain"
            onConfirm={remove}
          />
        )}
      </div>
      <ErrorMessage error={verify.error} />
    </article>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
  };
  return (
    <button type="button" className="copy" onClick={() => void copy()} aria-label={`${copied ? 'Copied' : 'Copy'} ${label}`}>
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
