// One of the spec's device, location and consent fields (spec 2.4 and the marketing consents) as form controls, for
// a field row of the condition builder, and the debounce of the reach count.
import { useEffect, useState } from 'react';
import type { FieldKey } from '../pages/filters-tree-model';
import { BROWSERS, CONSENT_LABELS, CONSENTS, EMAIL_STATUSES, fieldOf, OSES, PLATFORMS, type BuilderState } from '../pages/segment-builder-model';
import { Field } from './field';

export function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

interface Props {
  field: FieldKey;
  state: BuilderState;
  setState: (state: BuilderState) => void;
  error: unknown;
  /** Where the object holding the field sits in the request body, for the 422 details (`filters`, `segment.filters.all.2`). */
  prefix: string;
}

export function SegmentFilterField({ field, state, setState, error, prefix }: Props) {
  const textField = (key: 'country' | 'city' | 'device' | 'language' | 'tagsAny' | 'tagsAll' | 'tagsNone', label: string, hint?: string) => (
    <Field label={label} field={fieldOf(key, prefix)} error={error} value={state[key]} hint={hint} onChange={(event) => setState({ ...state, [key]: event.target.value })} />
  );
  const choices = <K extends 'platform' | 'browser' | 'os' | 'emailStatus' | 'emailConsent' | 'smsConsent' | 'whatsappConsent'>(
    key: K,
    legend: string,
    values: readonly BuilderState[K][number][],
    labels?: Record<string, string>,
  ) => (
    <fieldset className="choices">
      <legend>{legend}</legend>
      {values.map((value) => (
        <label key={value}>
          <input
            type="checkbox"
            checked={(state[key] as string[]).includes(value)}
            onChange={(event) =>
              setState({
                ...state,
                [key]: event.target.checked ? [...state[key], value] : (state[key] as string[]).filter((item) => item !== value),
              })
            }
          />{' '}
          {labels?.[value] ?? value}
        </label>
      ))}
    </fieldset>
  );
  switch (field) {
    case 'platform':
      return choices('platform', 'Platform', PLATFORMS);
    case 'browser':
      return choices('browser', 'Browser', BROWSERS);
    case 'os':
      return choices('os', 'Operating system', OSES);
    case 'emailStatus':
      return choices('emailStatus', 'Email status', EMAIL_STATUSES);
    case 'emailConsent':
      return choices('emailConsent', 'Email marketing', CONSENTS, CONSENT_LABELS);
    case 'smsConsent':
      return choices('smsConsent', 'SMS marketing', CONSENTS, CONSENT_LABELS);
    case 'whatsappConsent':
      return choices('whatsappConsent', 'WhatsApp marketing', CONSENTS, CONSENT_LABELS);
    case 'country':
      return textField('country', 'Countries', 'ISO codes, comma-separated: FR, BE');
    case 'city':
      return textField('city', 'Cities', 'Comma-separated');
    case 'device':
      return textField('device', 'Devices', 'e.g. Apple iPhone');
    case 'language':
      return textField('language', 'Languages', '"en" also matches en-US');
    case 'tags':
      return (
        <div className="row">
          {textField('tagsAny', 'Tags: any of')}
          {textField('tagsAll', 'Tags: all of')}
          {textField('tagsNone', 'Tags: none of')}
        </div>
      );
    case 'lastSeenDays':
      return (
        <Field
          label="Seen within (days)"
          field={fieldOf('lastSeenDays', prefix)}
          error={error}
          type="number"
          min={1}
          value={state.lastSeenDays}
          onChange={(event) => setState({ ...state, lastSeenDays: event.target.value })}
        />
      );
    case 'subscriptionDate':
      return (
        <div className="row">
          <Field
            label="Subscribed from"
            field={fieldOf('subscribedFrom', prefix)}
            error={error}
            type="date"
            value={state.subscribedFrom}
            onChange={(event) => setState({ ...state, subscribedFrom: event.target.value })}
          />
          <Field
            label="Subscribed until"
            field={fieldOf('subscribedTo', prefix)}
            error={error}
            type="date"
            value={state.subscribedTo}
            onChange={(event) => setState({ ...state, subscribedTo: event.target.value })}
          />
        </div>
      );
  }
}
