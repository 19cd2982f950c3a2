// A problem in words with the link to where it is fixed ("— verify it in Sending domains"), and a 422's details as a list.
import { Link, useParams } from '@tanstack/react-router';
import type { ApiError } from '../api/client';
import { codeIn, detailWords, fieldWords, reasonAction, type ReasonAction } from './reasons';

type Detail = NonNullable<ApiError['details']>[number];

/** " — verify it in Sending domains", linked within the project the page is in (nothing outside a project). */
export function ReasonLink({ action }: { action: ReasonAction | undefined }) {
  const { projectId } = useParams({ strict: false });
  if (!action || !projectId) return null;
  return (
    <>
      {' '}
      — {action.before}{' '}
      <Link to={action.to} params={{ projectId }}>
        {action.text}
      </Link>
    </>
  );
}

/** One detail's message in words, with its link when its code has one. */
export function DetailText({ message, value }: { message: string; value?: string | undefined }) {
  const code = codeIn(message);
  return (
    <>
      {detailWords(message, value)}
      <ReasonLink action={reasonAction(code)} />
    </>
  );
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * A 422's details no control shows, each as "<where>: <what>". `where` names a detail's place (a step and its field);
 * `valueAt` gives the value a detail is about (the sender address of `steps[4].content.from.email`).
 */
export function DetailList({ details, where, valueAt }: { details: Detail[]; where?: (field: string) => string; valueAt?: (field: string) => string | undefined }) {
  if (details.length === 0) return null;
  return (
    <ul className="problems">
      {details.map((detail, i) => {
        const place = where ? where(detail.field) : capitalised(fieldWords(detail.field));
        return (
          <li key={i}>
            {place && `${place}: `}
            <DetailText message={detail.error} value={valueAt?.(detail.field)} />
          </li>
        );
      })}
    </ul>
  );
}
