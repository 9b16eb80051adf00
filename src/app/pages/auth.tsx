import type { Child, FC } from 'hono/jsx';
import { safeNextPath } from '../auth/next-path';
import { REMEMBERED_BROWSER_DAYS } from '../auth/devices';
import { pendingSignIn } from '../auth/second-factor';
import { readSession } from '../auth/sessions';
import { type ConsentRequest, consentRequestAt } from './consent';
import { CardPage, Field } from './layout';
import { sitePage } from './page';

interface AuthPageProps {
  next: string | null;
  /** The MCP client waiting on the consent page `next` leads to, while its request is pending. */
  connecting: ConsentRequest | undefined;
  /** This browser's sign-in waits for its second factor (auth/second-factor.ts): the page asks for the code. */
  awaitingCode: boolean;
}

function withNext(path: string, next: string | null): string {
  return next ? `${path}?next=${encodeURIComponent(next)}` : path;
}

const AuthShell: FC<{ title: string; lede: string; children: Child; foot: Child }> = ({ title, lede, children, foot }) => (
  <CardPage title={title}>
    <div class="card">
      <h1>{title}</h1>
      <p class="lede">{lede}</p>
      {children}
    </div>
    <p class="auth-foot">{foot}</p>
  </CardPage>
);

const Connecting: FC<{ request: ConsentRequest | undefined; action: string }> = ({ request, action }) =>
  request ? (
    <p class="notice info small" data-connecting>
      {action} to connect <strong>{request.clientName}</strong>, which will receive access at <code>{request.redirectHost}</code>. You choose whether to allow it next.
    </p>
  ) : null;

const SignUpPage: FC<AuthPageProps> = ({ next, connecting }) => (
  <AuthShell
    title="Create your account"
    lede="One key for web, SEO, model-answer, social and lead data. You get an organization and a workspace to start."
    foot={
      <>
        Already have an account? <a href={withNext('/signin', next)}>Sign in</a>
      </>
    }
  >
    <Connecting request={connecting} action="Create an account" />
    <form class="stack" data-api="/api/auth/sign-up" data-then={`go:${next ?? '/'}`} novalidate>
      <p class="form-error" role="alert"></p>
      <Field name="name" label="Your name" autocomplete="name" maxlength={100} />
      <Field name="email" label="Email" type="email" autocomplete="email" />
      <Field name="password" label="Password" type="password" autocomplete="new-password" minlength={10} hint="At least 10 characters." />
      <button type="submit">Create account</button>
    </form>
  </AuthShell>
);

const SignInPage: FC<AuthPageProps> = (props) => (props.awaitingCode ? <SecondFactorStep {...props} /> : <PasswordStep {...props} />);

// The password's answer signs in, or starts the wait for a code: the script then loads this page again, which asks for it.
const PasswordStep: FC<AuthPageProps> = ({ next, connecting }) => (
  <AuthShell
    title="Sign in"
    lede="Welcome back."
    foot={
      <>
        New to Sluice? <a href={withNext('/signup', next)}>Create an account</a>
      </>
    }
  >
    <Connecting request={connecting} action="Sign in" />
    <form class="stack" data-api="/api/auth/sign-in" data-then={`go:${next ?? '/'}`} novalidate>
      <p class="form-error" role="alert"></p>
      <Field name="email" label="Email" type="email" autocomplete="username" />
      <Field name="password" label="Password" type="password" autocomplete="current-password" />
      <button type="submit">Sign in</button>
    </form>
    <p class="centered small">
      <a href="/forgot-password">Forgot your password?</a>
    </p>
  </AuthShell>
);

const SecondFactorStep: FC<AuthPageProps> = ({ next, connecting }) => (
  <AuthShell
    title="Two-factor sign-in"
    lede="Enter the code your authenticator app shows for Sluice."
    foot={
      <>
        Not you, or another account?{' '}
        <button type="button" class="link" data-api="/api/auth/sign-out" data-then="reload">
          Start over
        </button>
      </>
    }
  >
    <Connecting request={connecting} action="Sign in" />
    <form class="stack" data-api="/api/auth/sign-in/two-factor" data-then={`go:${next ?? '/'}`} novalidate>
      <p class="form-error" role="alert"></p>
      <Field name="code" label="Code from the app" autocomplete="one-time-code" inputmode="numeric" maxlength={7} hint="Six digits; a new one every 30 seconds." />
      <RememberBrowser />
      <button type="submit">Verify</button>
    </form>
    <details class="fold">
      <summary>Use a recovery code instead</summary>
      <form class="stack" data-api="/api/auth/sign-in/two-factor" data-then={`go:${next ?? '/'}`} novalidate>
        <p class="form-error" role="alert"></p>
        <Field name="recoveryCode" label="Recovery code" autocomplete="off" maxlength={40} hint="One of the codes saved when two-factor sign-in was turned on. Each works once." />
        <RememberBrowser />
        <button type="submit" class="secondary">
          Sign in with a recovery code
        </button>
      </form>
      <p class="small muted">
        Lost the app and the codes? If you are still signed in on another browser, make new recovery codes in its Settings with your password. If not, ask
        support to reset it: once they are sure it is you, every browser of the account is signed out, your address is told, and the password alone signs
        in.
      </p>
    </details>
  </AuthShell>
);

/** The second step's choice to skip it on this browser for a while (auth/devices.ts). */
const RememberBrowser: FC = () => (
  <label class="check">
    <input type="checkbox" name="rememberBrowser" value="true" /> Don't ask for a code on this browser for {REMEMBERED_BROWSER_DAYS} days
  </label>
);

/**
 * Sign-in and sign-up, each with the page to go to afterwards (`?next=`, a path of this site) carried
 * through both and through the links between them: an MCP client's consent request, an invitation.
 */
function authPage(path: '/signin' | '/signup', view: FC<AuthPageProps>) {
  return sitePage({
    path,
    load: async (c): Promise<AuthPageProps | Response> => {
      const asked = new URL(c.req.url).searchParams.get('next');
      const next = safeNextPath(asked);
      // The page's script also reads ?next= from the address bar: one that is not ours never stays there.
      if (asked !== null && next === null) return c.redirect(path, 303);
      if (await readSession(c)) return c.redirect(next ?? '/', 303);
      const awaitingCode = path === '/signin' && (await pendingSignIn(c)) !== null;
      return { next, awaitingCode, connecting: next ? await consentRequestAt(c.env, next) : undefined };
    },
    view,
  });
}

export const signInPage = authPage('/signin', SignInPage);
export const signUpPage = authPage('/signup', SignUpPage);
