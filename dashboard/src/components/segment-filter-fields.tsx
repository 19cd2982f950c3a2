// The 11 filters of spec 2.4 and the marketing consent filters as form controls (segment editor, campaign builder), and the debounce of the reach count.
import { useEffect, useState } from 'react';
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
  state: BuilderState;
  setState: (state: BuilderState) => void;
  error: unknown;
  /** Where the filters sit in the request body, for the 422 details: `filters`, or `segment.filters` in a campaign. */
  prefix?: string;
}

export function SegmentFilterFields({ state, setState, error, prefix = 'filters' }: Props) {
  const textField = (key: keyof BuilderState & ('country' | 'city' | 'device' | 'language' | 'tagsAny' | 'tagsAll' | 'tagsNone'), label: string, hint?: string) => (
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
  return (
    <>
      <div className="row">
        {choices('platform', 'Platform', PLATFORMS)}
        {choices('browser', 'Browser', BROWSERS)}
        {choices('os', 'Operating system', OSES)}
        {choices('emailStatus', 'Email status', EMAIL_STATUSES)}
      </div>
      <div className="row">
        {choices('emailConsent', 'Email marketing', CONSENTS, CONSENT_LABELS)}
        {choices('smsConsent', 'SMS marketing', CONSENTS, CONSENT_LABELS)}
        {choices('whatsappConsent', 'WhatsApp marketing', CONSENTS, CONSENT_LABELS)}
      </div>
      <div className="row">
        {textField('country', 'Countries', 'ISO codes, comma-separated: FR, BE')}
        {textField('city', 'Cities')}
        {textField('device', 'Devices', 'e.g. Apple iPhone')}
        {textField('language', 'Languages', '"en" also matches en-US')}
      </div>
      <div className="row">
        {textField('tagsAny', 'Tags: any of')}
        {textField('tagsAll', 'Tags: all of')}
        {textField('tagsNone', 'Tags: none of')}
      </div>
      <div className="row">
        <Field
          label="Seen within (days)"
          field={fieldOf('lastSeenDays', prefix)}
          error={error}
          type="number"
          min={1}
          value={state.lastSeenDays}
          onChange={(event) => setState({ ...state, lastSeenDays: event.target.value })}
        />
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
    </>
  );
}
