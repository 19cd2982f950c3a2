// The browser SDK's module entry: the page's one Herald client, and its types.
import { HeraldClient } from './herald.js';

export const Herald = new HeraldClient();
export default Herald;

export { HeraldError, type Result } from './api.js';
export type { Channels, ClickDetail, HeraldClient, HeraldEvent, HeraldOptions } from './herald.js';
export type { Registered } from './subscription.js';
