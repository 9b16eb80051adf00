import { facebookOperations } from './facebook';
import { facebookMediaOperations } from './facebook-media';
import { instagramOperations } from './instagram';
import { linkedinOperations } from './linkedin';
import { tiktokOperations } from './tiktok';
import { xOperations } from './x';
import { youtubeOperations } from './youtube';
import { youtubeScreenshotOperations } from './youtube-screenshot';

/** The social-platform groups, one vendor table per slug. */
export const socialOperations = [...linkedinOperations, ...youtubeOperations, ...youtubeScreenshotOperations, ...tiktokOperations, ...xOperations, ...instagramOperations, ...facebookOperations, ...facebookMediaOperations];
