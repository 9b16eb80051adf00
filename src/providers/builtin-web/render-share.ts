/**
 * Pages one organization renders at once, across its workspaces and every isolate (organization-renders.ts).
 * Browser Rendering's browsers are the account's (a few dozen at once), shared by every organization: one
 * organization's burst of script-built or hostile pages, or its many workspaces' together, would otherwise
 * take them all. A module of its own, free of the Workers runtime's types, so the end-to-end tests read the
 * same figure.
 */
export const RENDERS_AT_ONCE = 4;
