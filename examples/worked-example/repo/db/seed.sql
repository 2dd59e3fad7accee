-- The test database: 20 customers, anonymized (names replaced by digests,
-- balances kept). db/start.sh loads it once into the cluster's `invoice`
-- database. `control` holds the audit totals the data was exported with:
-- db/query.sh check compares the table against them.
CREATE TABLE customers (
	id integer PRIMARY KEY,
	customer text NOT NULL,
	country char(2) NOT NULL,
	balance numeric(12, 2) NOT NULL CHECK (balance >= 0)
);
CREATE TABLE control (rows integer NOT NULL, total_cents bigint NOT NULL);
INSERT INTO customers (id, customer, country, balance) VALUES
	(1, 'cust-e83f10dcd2', 'DE', 337.53),
	(2, 'cust-61d19062e7', 'FR', 274.06),
	(3, 'cust-706df33bbd', 'NL', 211.59),
	(4, 'cust-55acbab4b9', 'IT', 148.12),
	(5, 'cust-6bcf143a8d', 'DE', 85.65),
	(6, 'cust-a573e22188', 'FR', 22.18),
	(7, 'cust-acade5fe58', 'NL', 359.71),
	(8, 'cust-d6856a5453', 'IT', 296.24),
	(9, 'cust-4ec8c502ac', 'DE', 233.77),
	(10, 'cust-a3ad10b01c', 'FR', 170.30),
	(11, 'cust-6b966c2e1d', 'NL', 107.83),
	(12, 'cust-29ca0ff2ef', 'IT', 44.36),
	(13, 'cust-da35683706', 'DE', 381.89),
	(14, 'cust-d57a096594', 'FR', 318.42),
	(15, 'cust-df679543ab', 'NL', 255.95),
	(16, 'cust-e60903f5c7', 'IT', 192.48),
	(17, 'cust-db2f1aab1d', 'DE', 129.01),
	(18, 'cust-86de594f78', 'FR', 66.54),
	(19, 'cust-6a36bc61ab', 'NL', 3.07),
	(20, 'cust-2baba56586', 'IT', 340.60);
INSERT INTO control VALUES (20, 397930);
