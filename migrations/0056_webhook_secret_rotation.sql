-- A webhook endpoint's signing secret can be rotated: the secret it replaced keeps signing beside the new one until
-- previous_secret_expires_at (epoch ms), so receivers can move to the new one without missing a delivery.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_ciphertext TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at INTEGER;
