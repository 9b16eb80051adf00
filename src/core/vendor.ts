import type { SettingName } from './config';
import type { ApiError } from './errors';

/** What a vendor's 2xx answer means: its payload, or a failure told in the body (spec rule 1: 422). */
export type VendorReading = { ok: true; data: unknown; message?: string } | { ok: false; message?: string };

/**
 * One upstream vendor, declared as data plus the few functions its family needs. A family (RapidAPI
 * scrapers, Google APIs, Hunter, People Data Labs) supplies `authenticate`, `read` and, where its errors
 * are its own, `classify`; every operation of the vendor is then a table row (`VendorEndpoint`).
 */
export interface Vendor {
  /** Named in error messages: "The TikTok data provider failed: ...". */
  label: string;
  /** Our fixture and fake directory name, and the vendor's name in the catalog of decisions. */
  id: string;
  keySetting: SettingName;
  /** RapidAPI-style families need the vendor's host as a header; others leave it out. */
  hostSetting?: SettingName;
  baseUrlSetting: SettingName;
  /** Base URL when `baseUrlSetting` is unset and the family has no host to derive it from. */
  defaultBaseUrl?: string;
  /** Where the key goes: headers and/or query parameters. */
  authenticate(key: string, host: string | undefined): { headers?: Record<string, string>; query?: Record<string, string> };
  read(body: unknown): VendorReading;
  /** A vendor's own reading of a non-2xx answer (e.g. Google's 403 quotaExceeded); undefined: the common rules. */
  classify?(status: number, body: unknown): ApiError | undefined;
}

type Scalar = string | number | boolean;

/**
 * One vendor endpoint as data: the path, how our validated input becomes its parameters (renamed where the
 * vendor's names differ, fixed values it always needs), and whether the input travels as query or JSON body.
 */
export interface VendorEndpoint {
  method?: 'GET' | 'POST';
  /** Relative to the vendor's base URL: `user/info`, `v2/email-finder`, `` for the root. */
  path: string;
  /** Our field name → the vendor's parameter name. */
  rename?: Record<string, string>;
  /**
   * Parameters sent on every call (Google's `part`, a search `type`). Objects and arrays only travel in a
   * JSON body (POST): xAI's `tools: [{type: 'x_search'}]`.
   */
  fixed?: Record<string, Scalar | readonly object[] | object>;
  /** Input fields prefixed onto a vendor parameter: `{ tag: '#' }` makes a hashtag search query. */
  prefix?: Record<string, string>;
}
