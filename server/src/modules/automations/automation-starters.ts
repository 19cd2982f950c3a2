// The four starter automations of spec 2.5, cloned into a project as editable drafts.
import type { AutomationTrigger } from '../../db/schema.js';
import type { StepInput } from './automation.schemas.js';

export interface Starter {
  id: 'welcome-series' | 'reengagement-30d' | 'onboarding-drip-7d' | 'abandoned-cart';
  name: string;
  description: string;
  trigger: AutomationTrigger;
  steps: StepInput[];
}

/** Starters' emails go from this address until the project puts one of its verified domains in (activation checks it). */
const FROM = { email: 'hello@example.com', name: 'The team' };

const email = (subject: string, body: string) => ({
  subject,
  html: `<p>Hi{% if first_name %} {{ first_name }}{% endif %},</p><p>${body}</p>`,
  from: FROM,
});

export const STARTERS: readonly Starter[] = [
  {
    id: 'welcome-series',
    name: 'Welcome series',
    description: 'Greets each new subscriber at once, then sends tips by email the next day and a reminder three days later.',
    trigger: { type: 'subscriber_added' },
    steps: [
      { id: 'welcome-push', type: 'send_push', content: { title: 'Welcome!', body: 'Thanks for subscribing. We will keep you posted.' }, next: 'wait-1d' },
      { id: 'wait-1d', type: 'delay', duration: '1d', next: 'tips-email' },
      { id: 'tips-email', type: 'send_email', content: email('Getting started', 'Here are three things to try first.'), next: 'wait-3d' },
      { id: 'wait-3d', type: 'delay', duration: '3d', next: 'reminder-push' },
      { id: 'reminder-push', type: 'send_push', content: { title: 'Did you know?', body: 'There is more to discover: take a look.' }, next: null },
    ],
  },
  {
    id: 'reengagement-30d',
    name: 'Re-engagement after 30 days',
    description: 'Reaches subscribers not seen for 30 days with a push; those still away three days later get an email.',
    trigger: { type: 'subscriber_inactive', inactiveDays: 30 },
    steps: [
      { id: 'miss-you-push', type: 'send_push', content: { title: 'We miss you', body: 'A lot has changed since your last visit.' }, next: 'wait-3d' },
      { id: 'wait-3d', type: 'delay', duration: '3d', next: 'came-back' },
      { id: 'came-back', type: 'condition', criteria: { subscriber: { lastSeenDays: 3 } }, trueBranch: 'done', falseBranch: 'whats-new-email' },
      { id: 'whats-new-email', type: 'send_email', content: email("Here's what's new", 'We have been busy: here is what you missed.'), next: null },
      { id: 'done', type: 'exit' },
    ],
  },
  {
    id: 'onboarding-drip-7d',
    name: 'Onboarding drip (7 days)',
    description: 'Four onboarding emails over a new subscriber\'s first week: day 0, 1, 3 and 7.',
    trigger: { type: 'subscriber_added' },
    steps: [
      { id: 'day-0', type: 'send_email', content: email('Welcome aboard', 'Let us set you up in five minutes.'), next: 'wait-1d' },
      { id: 'wait-1d', type: 'delay', duration: '1d', next: 'day-1' },
      { id: 'day-1', type: 'send_email', content: email('Your first win', 'Here is the one feature most people love first.'), next: 'wait-2d' },
      { id: 'wait-2d', type: 'delay', duration: '2d', next: 'day-3' },
      { id: 'day-3', type: 'send_email', content: email('Going further', 'Three tips from our most active users.'), next: 'wait-4d' },
      { id: 'wait-4d', type: 'delay', duration: '4d', next: 'day-7' },
      { id: 'day-7', type: 'send_email', content: email('How is it going?', 'Reply to this email: we read every answer.'), next: null },
    ],
  },
  {
    id: 'abandoned-cart',
    name: 'Abandoned cart',
    description: 'After a cart.abandoned event: a push an hour later, then a day later an email with a discount for carts of 50 or more.',
    trigger: { type: 'event', eventName: 'cart.abandoned' },
    steps: [
      { id: 'wait-1h', type: 'delay', duration: '1h', next: 'reminder-push' },
      { id: 'reminder-push', type: 'send_push', content: { title: 'You left something behind', body: 'Your cart is waiting for you.' }, next: 'wait-1d' },
      { id: 'wait-1d', type: 'delay', duration: '1d', next: 'big-cart' },
      { id: 'big-cart', type: 'condition', criteria: { event: [{ path: 'total', operator: 'gte', value: 50 }] }, trueBranch: 'discount-email', falseBranch: null },
      {
        id: 'discount-email',
        type: 'send_email',
        content: email('10% off your cart', 'Complete your order of {{ event.total }} today with the code COMEBACK10.'),
        next: null,
      },
    ],
  },
];
