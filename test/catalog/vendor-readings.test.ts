import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors';
import { googleApiVendor } from '../../src/providers/google-api';
import { hunter, peopleDataLabs } from '../../src/providers/lead-apis';
import { OPERATIONS } from '../../src/operations';
import { rapidApiAnswers } from '../../src/providers/rapidapi';
import { xai } from '../../src/providers/xai';
import { endpointUrl, vendorParameters } from '../../src/providers/vendor';

/** The vendor-specific readings the registry-generated test does not provoke one by one. */
const youtube = googleApiVendor({ id: 'youtube-data-api', label: 'The YouTube Data API', keySetting: 'YOUTUBE_API_KEY', baseUrlSetting: 'YOUTUBE_BASE_URL', defaultBaseUrl: 'https://example.test' });
const googleError = (reason: string, message = 'm') => ({ error: { code: 403, message, errors: [{ reason }] } });

function outcome(error: ApiError | undefined) {
  return error && { code: error.code, status: error.status };
}

describe('Google API errors by reason', () => {
  it.each([
    ['quotaExceeded', 403, 'UPSTREAM_CREDITS_EXHAUSTED', 503],
    ['dailyLimitExceeded', 403, 'UPSTREAM_CREDITS_EXHAUSTED', 503],
    ['keyInvalid', 400, 'PROVIDER_ERROR', 502],
    ['accessNotConfigured', 403, 'PROVIDER_ERROR', 502],
    ['commentsDisabled', 403, 'PROVIDER_ERROR', 403],
    ['videoNotFound', 404, 'PROVIDER_ERROR', 404],
    ['invalidParameter', 400, 'PROVIDER_ERROR', 400],
  ])('%s (HTTP %i) is %s %i', (reason, status, code, answered) => {
    expect(outcome(youtube.classify!(status, googleError(reason)))).toEqual({ code, status: answered });
  });

  it('leaves a 5xx or a body that is not Google\'s to the common rules', () => {
    expect(youtube.classify!(500, googleError('backendError'))).toBeUndefined();
    expect(youtube.classify!(404, undefined)).toBeUndefined();
  });
});

describe('Hunter', () => {
  it('tells our month\'s allowance spent (503) from a throttle (the common rules: 429)', () => {
    const spent = { errors: [{ id: 'too_many_requests', code: 429, details: "You've reached your usage limit for this month." }] };
    const throttled = { errors: [{ id: 'too_many_requests', code: 429, details: 'You have reached the rate limit of 15 requests per second.' }] };
    expect(outcome(hunter.classify!(429, spent))).toEqual({ code: 'UPSTREAM_CREDITS_EXHAUSTED', status: 503 });
    expect(hunter.classify!(429, throttled)).toBeUndefined();
  });

  it('passes its own 4xx through with its words, and reads an errors body in a 200 as a failure', () => {
    const error = hunter.classify!(400, { errors: [{ id: 'wrong_params', code: 400, details: 'You are missing the domain parameter' }] });
    expect(outcome(error)).toEqual({ code: 'PROVIDER_ERROR', status: 400 });
    expect(error!.message).toContain('missing the domain');
    expect(hunter.read({ errors: [{ details: 'nope' }] })).toEqual({ ok: false, message: 'nope' });
  });
});

describe('People Data Labs', () => {
  it('reads a 200 status body as success and anything else as a failure', () => {
    expect(peopleDataLabs.read({ status: 200, data: [] }).ok).toBe(true);
    expect(peopleDataLabs.read({ status: 400, error: { message: 'bad' } })).toEqual({ ok: false, message: 'bad' });
  });
});

describe('RapidAPI answer shapes', () => {
  it('reads a whole-body payload that merely has an error field among its data as a success', () => {
    expect(rapidApiAnswers.whole({ status: 'error', message: 'User not found' })).toEqual({ ok: false, message: 'User not found' });
    expect(rapidApiAnswers.whole({ error: 'Page not found' })).toEqual({ ok: false, message: 'Page not found' });
    expect(rapidApiAnswers.whole({ status: false, errorMessage: 'private' })).toEqual({ ok: false, message: 'private' });
    const post = { id: '1', text: 'hi', error: 'media unavailable', author: {}, likes: 3 };
    expect(rapidApiAnswers.whole(post)).toEqual({ ok: true, data: post });
  });

  it('reads code 0 as success and any other code as the vendor\'s failure', () => {
    expect(rapidApiAnswers.codeZero({ code: 0, msg: 'success', data: { a: 1 } })).toEqual({ ok: true, data: { a: 1 } });
    expect(rapidApiAnswers.codeZero({ code: -1, msg: 'Url parsing is failed!' })).toEqual({ ok: false, message: 'Url parsing is failed!' });
  });
});

describe('the X translation vendor (Twitter283)', () => {
  const translation = OPERATIONS.find((operation) => operation.platform === 'x' && operation.name === 'post-translation')!.upstream!.vendor;

  it('reads an answer carrying translate_tweet as the translation, and one without it as a post it could not translate', () => {
    const translated = { data: { tweet_results: { rest_id: '1', result: { rest_id: '1', translate_tweet: { translation: 'hola', source_language: 'en' } } } } };
    expect(translation.read(translated)).toEqual({ ok: true, data: translated });
    expect(translation.read({ data: { tweet_results: {} } })).toEqual({ ok: false, message: 'No translation of this post.' });
    expect(translation.read({ error: 'Tweet not found' })).toEqual({ ok: false, message: 'Tweet not found' });
  });
});

describe('xAI', () => {
  const spent = { code: 'The caller does not have permission to execute the specified operation', error: 'Your team has either used all available credits or reached its monthly spending limit.' };

  it('tells our credits or spending limit running out (503, on a 403 or a 429) from a throttle and from our key being wrong', () => {
    expect(outcome(xai.classify!(403, spent))).toEqual({ code: 'UPSTREAM_CREDITS_EXHAUSTED', status: 503 });
    expect(outcome(xai.classify!(429, spent))).toEqual({ code: 'UPSTREAM_CREDITS_EXHAUSTED', status: 503 });
    expect(xai.classify!(429, { code: 'Some resource has been exhausted', error: 'Too many requests' })).toBeUndefined();
    expect(outcome(xai.classify!(400, { code: 'Client specified an invalid argument', error: 'Incorrect API key provided.' }))).toEqual({ code: 'PROVIDER_ERROR', status: 502 });
    expect(xai.classify!(400, { code: 'Client specified an invalid argument', error: 'Argument not supported on this model: presencePenalty' })).toBeUndefined();
  });

  it('reads only a completed response as an answer', () => {
    expect(xai.read({ id: 'r', status: 'completed', output: [] }).ok).toBe(true);
    expect(xai.read({ id: 'r', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })).toEqual({ ok: false, message: 'Grok did not finish (max_output_tokens)' });
  });
});

describe('vendor parameters', () => {
  it('renames, prefixes and fixes parameters, leaving absent fields out', () => {
    expect(vendorParameters({ path: 'search.php', rename: { tag: 'query' }, prefix: { tag: '#' }, fixed: { part: 'snippet' } }, { tag: 'edge', cursor: undefined })).toEqual({
      part: 'snippet',
      query: '#edge',
    });
  });

  it('keeps the base URL\'s own path', () => {
    expect(endpointUrl('https://www.googleapis.com/youtube/v3', 'videos').href).toBe('https://www.googleapis.com/youtube/v3/videos');
    expect(endpointUrl('https://host.example/', '').href).toBe('https://host.example/');
  });
});
