#!/usr/bin/env node
// The `herald` command: runs the compiled CLI (npm run build produces server/dist).
import '../dist/main.js';
