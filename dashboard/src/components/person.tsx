// A person named as a reader knows them — name, else email, else phone, else external id, else their device — and
// linked to their page; never a bare subscriber id.
import { Link } from '@tanstack/react-router';

export interface PersonSummary {
  id: string;
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  externalId?: string | null;
  browser?: string | null;
  os?: string | null;
}

/** "Ada Lovelace", "ada@example.com", "+14155550100", "user-42", or "Anonymous device (Chrome on Windows)". */
export function personLabel(person: PersonSummary): string {
  const known = person.name ?? person.email ?? person.phone ?? person.externalId;
  if (known) return known;
  const device = [person.browser, person.os].filter(Boolean).join(' on ');
  return device ? `Anonymous device (${device})` : 'Anonymous device';
}

/** The person's name linked to their page; one deleted since is said so. */
export function PersonLink({ projectId, person }: { projectId: string; person: PersonSummary | null }) {
  if (!person) return <span className="muted">A deleted subscriber</span>;
  return (
    <Link to="/projects/$projectId/subscribers/$subscriberId" params={{ projectId, subscriberId: person.id }}>
      {personLabel(person)}
    </Link>
  );
}
