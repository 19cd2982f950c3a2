// The script-tag build's entry: `<script src=".../sdk/herald.js">` defines `window.Herald`.
import { Herald } from './index.js';

declare global {
  interface Window {
    Herald: typeof Herald;
  }
}

window.Herald = Herald;
