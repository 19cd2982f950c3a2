// Every code the API answers with has words, and a 422's detail reads as a person would say it.
import { describe, expect, it } from 'vitest';
import schema from '../api/schema.d.ts?raw';
import { codeIn, detailWords, envelopeWords, fieldWords, REASONS, reasonAction, reasonWords, stepIndexOf } from './reasons';

/** The reason codes the API documents: every enum of reasons in its OpenAPI document, as the dashboard's types have it. */
function documentedReasons(): string[] {
  const codes = new Set<string>();
  for (const match of schema.matchAll(/^\s*reason\??: (.+);$/gm)) for (const code of match[1]!.matchAll(/"([a-z_0-9]+)"/g)) codes.add(code[1]!);
  return [...codes];
}

describe('the reason map', () => {
  it('has words for every reason code the API documents', () => {
    const codes = documentedReasons();
    expect(codes.length).toBeGreaterThan(20);
    expect(codes.filter((code) => !REASONS[code])).toEqual([]);
  });

  it('says delivery, enrollment, step, suppression and opt-out reasons in words', () => {
    expect(reasonWords('recipient_bounced')).toBe('the address bounced before and is suppressed');
    expect(reasonWords('skipped:no_email')).toBe('skipped: the person has no email address');
    expect(reasonWords('skipped:subscriber_unsubscribed')).toBe('skipped: the person unsubscribed');
    expect(reasonWords('failed:provider_error')).toBe('failed: the provider refused it or could not be reached');
    expect(reasonWords('step_not_found:welcome')).toBe('its step no longer exists (welcome)');
    expect(reasonWords('exit_step')).toBe('reached an exit step');
    expect(reasonWords('automation_archived')).toBe('the automation was archived');
    expect(reasonWords('complained')).toBe('marked as spam (permanent)');
    expect(reasonWords('sms_stop')).toBe('sent STOP (or a synonym)');
    expect(reasonWords('something_new')).toBe('something new');
    expect(reasonWords(null)).toBe('');
  });

  it('names the domain of an unverified sender, and where to verify it', () => {
    expect(reasonWords('sender_domain_not_verified', 'news@example.com')).toBe('the sender’s domain example.com is not verified');
    expect(reasonWords('sender_domain_not_verified')).toBe('the sender’s domain is not verified');
    expect(reasonAction('sender_domain_not_verified')).toEqual({ before: 'verify it in', text: 'Sending domains', to: '/projects/$projectId/domains' });
    expect(reasonAction('unverified_sender_id')?.text).toBe('SMS');
    expect(reasonAction('recipient_bounced')).toBeUndefined();
  });

  it('keeps an envelope’s own message unless the code says more', () => {
    expect(envelopeWords('validation_failed', 'Validation failed')).toBe('Some values need changing');
    expect(envelopeWords('rate_limited', 'Rate limit exceeded')).toBe('Too many requests: wait a moment and try again');
    expect(envelopeWords('campaign_not_pausable', 'A sent campaign cannot be paused: only sending ones can')).toBe('A sent campaign cannot be paused: only sending ones can');
  });
});

describe('a 422 detail in words', () => {
  it('replaces a message naming a code by the code’s words, about the field’s value', () => {
    const message = 'step welcome: is not on a verified sending domain of the project (sender_domain_not_verified)';
    expect(codeIn(message)).toBe('sender_domain_not_verified');
    expect(detailWords(message, 'hello@example.com')).toBe('the sender’s domain example.com is not verified');
    expect(detailWords('step big-cart: trueBranch names no step (discount-email)')).toBe('trueBranch names no step (discount-email)');
    expect(detailWords('must be at most 200 characters')).toBe('must be at most 200 characters');
    // A step id in brackets is not a code, even one that is a word of the map.
    expect(detailWords('step c: falseBranch names no step (sandbox)')).toBe('falseBranch names no step (sandbox)');
  });

  it('names fields and steps as a person would', () => {
    expect(fieldWords('steps[4].content.from.email')).toBe('sender address');
    expect(fieldWords('steps.2.content.title')).toBe('title');
    expect(fieldWords('filters.tags.all.0')).toBe('filters tags all');
    expect(fieldWords('settings.deliveryPolicy.quietHours.start')).toBe('delivery policy quiet hours start');
    expect(fieldWords('query.pageSize')).toBe('page size');
    expect(stepIndexOf('steps[4].content.from.email')).toBe(4);
    expect(stepIndexOf('steps.0.next')).toBe(0);
    expect(stepIndexOf('trigger.eventName')).toBeUndefined();
  });
});
