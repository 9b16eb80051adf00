-- An account its person deleted (app/account-deletion.ts): the row stays for the records that name it (invitations
-- sent, keys made), with its address and name erased and no password that can sign in.
ALTER TABLE users ADD COLUMN deleted_at TEXT;
-- An organization closed with the account of its only member: its workspaces deleted, its bill kept.
ALTER TABLE organizations ADD COLUMN closed_at TEXT;
