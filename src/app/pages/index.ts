import { accountDeletedPage } from './account-deleted';
import { activityPage } from './activity';
import { agentsPage } from './agents';
import { signInPage, signUpPage } from './auth';
import { connectionsPage } from './connections';
import { confirmEmailChangePage } from './confirm-email-change';
import { consentPage } from './consent';
import { databasesPage } from './databases';
import { invitationPage, outboxPage } from './invitation';
import { jobsPage } from './jobs';
import { keysPage } from './keys';
import { mcpPage } from './mcp';
import { membersPage } from './members';
import type { Page } from './page';
import { forgotPasswordPage, resetPasswordPage } from './password';
import { plansPage } from './plans';
import { serversPage } from './servers';
import { settingsPage } from './settings';
import { usagePage } from './usage';
import { verifyEmailPage } from './verify-email';
import { vendorConnectionsPage } from './vendor-connections';
import { webhooksPage } from './webhooks';

/**
 * Every page of the dashboard (src/app/pages/page.tsx says what a page is). The workspace pages are the
 * sidebar's tabs, in this order. A new page is its module and one line here.
 */
export const PAGES: readonly Page[] = [
  keysPage,
  mcpPage,
  serversPage,
  connectionsPage,
  vendorConnectionsPage,
  agentsPage,
  jobsPage,
  webhooksPage,
  usagePage,
  databasesPage,
  membersPage,
  activityPage,
  plansPage,
  settingsPage,
  signInPage,
  signUpPage,
  consentPage,
  invitationPage,
  outboxPage,
  verifyEmailPage,
  forgotPasswordPage,
  resetPasswordPage,
  confirmEmailChangePage,
  accountDeletedPage,
];
