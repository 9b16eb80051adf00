/**
 * The dashboard's browser code as one script, bundled from src/app/browser and src/app/pages/*.browser.ts
 * into dashboard-script.js by scripts/dashboard-script.mjs (generated, not committed).
 */
declare const script: string;
export default script;
