/**
 * The `data` each Instagram row answers, for the OpenAPI document: shortened from
 * test/fixtures/instagram-looter2. test/openapi.test.ts parses each against its row's `output` schema.
 */

export const instagramAnswers = {
  search: {
    status: true,
    users: [{ position: 0, user: { pk: '528817151', username: 'nasa', full_name: 'NASA', is_verified: true } }],
    hashtags: [{ position: 1, hashtag: { name: 'nasa', id: '17843856079033541', media_count: 12000000 } }],
    places: [],
  },
  location: {
    location_info: { location_id: '219045149', name: 'Dubai UAE', category: 'Travel & Transportation', media_count: 12594, lat: 25.088510700166, lng: 55.147547878986, slug: 'dubai-uae' },
  },
  'location-posts': {
    edges: [{ node: { pk: '3363840123456789012', code: 'C6q-XnGsTCz', taken_at: 1715625600, caption: { text: 'Sunset over the Marina' } }, cursor: 'a7b13800275848929a96cf3549813b25' }],
    page_info: { end_cursor: 'a7b13800275848929a96cf3549813b25', has_next_page: true },
  },
  hashtag: {
    data: { hashtag: { id: '17843855416042063', name: 'space', edge_hashtag_to_media: { count: 41000000, page_info: { has_next_page: true, end_cursor: 'QVFDbnJ4' }, edges: [] } } },
    status: 'ok',
  },
  'user-info': {
    status: true,
    id: '528817151',
    username: 'nasa',
    full_name: 'NASA',
    biography: 'Exploring the universe and our home planet.',
    is_verified: true,
    edge_followed_by: { count: 97000000 },
  },
  'user-posts': {
    status: true,
    items: [{ id: '3363840123456789012_528817151', code: 'C6q-XnGsTCz', media_type: 1, caption: { text: 'The Pillars of Creation' }, like_count: 910000, comment_count: 4100, taken_at: 1715625600 }],
    more_available: true,
    next_max_id: '3363840123456789012_528817151',
  },
  'user-id': { status: true, user_id: '528817151', username: 'nasa' },
  username: { status: true, username: 'nasa', user_id: '528817151' },
  media: {
    status: true,
    id: '3363840123456789012',
    shortcode: 'C6q-XnGsTCz',
    display_url: 'https://scontent.cdninstagram.com/v/t51/pillars.jpg?oe=6787F95F',
    is_video: false,
    owner: { id: '528817151', username: 'nasa', is_verified: true },
    edge_media_to_caption: { edges: [{ node: { text: 'The Pillars of Creation' } }] },
    edge_media_preview_like: { count: 910000 },
    taken_at_timestamp: 1715625600,
  },
  explore: {
    sections: [
      { section_id: '10155994923880727', name: 'Games', subsections: [{ section_id: '10155994923880728', name: 'Esports' }] },
      { section_id: '10155994923880731', name: 'TV & Movies', subsections: [] },
    ],
    status: 'ok',
  },
  'explore-section': {
    section_name: 'Games',
    max_id: '3022944298396964424',
    more_available: true,
    items: [{ id: '3363840123456789099_44551234', code: 'C6q-XnGsTDa', media_type: 2 }],
    status: 'ok',
  },
};
