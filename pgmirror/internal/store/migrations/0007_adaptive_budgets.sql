-- pgmirror migration 7: budgets that adapt.
--
-- A business's request rate is no longer a number to guess: it starts
-- high (its explicit budget, a ceiling, when it has one), drops on a 429
-- (or a Retry-After) to below the rate it was using, at most once a
-- second, and creeps back up while the service answers:
-- mirror_budgets.rate is the rate set at rate_at, from which it has crept
-- since; spent is the tokens taken, decayed by e each second since
-- spent_at (about the rate in use). mirror_businesses.budget is now the
-- ceiling a business was given, NULL for none: the rows holding 10, the
-- old default (not told apart from an explicit 10), become NULL.
ALTER TABLE mirror_budgets ADD COLUMN rate double precision;
ALTER TABLE mirror_budgets ADD COLUMN rate_at timestamptz;
ALTER TABLE mirror_budgets ADD COLUMN spent double precision NOT NULL DEFAULT 0;
ALTER TABLE mirror_budgets ADD COLUMN spent_at timestamptz;
ALTER TABLE mirror_businesses ALTER COLUMN budget DROP NOT NULL;
UPDATE mirror_businesses SET budget = NULL WHERE budget = 10;
