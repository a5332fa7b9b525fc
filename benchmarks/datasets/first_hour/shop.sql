CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, joined DATE NOT NULL);
CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), placed DATE NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), sku TEXT NOT NULL REFERENCES products(sku), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES
 (1, 'Ada Lovelace', 'London', '2024-03-02'),
 (2, 'Alan Turing', 'Manchester', '2024-05-17'),
 (3, 'Grace Hopper', 'New York', '2024-07-09'),
 (4, 'Katherine Johnson', 'Hampton', '2025-01-21'),
 (5, 'Edsger Dijkstra', 'Rotterdam', '2025-02-14'),
 (6, 'Barbara Liskov', 'Boston', '2025-04-30');
INSERT INTO products VALUES
 ('DESK-01', 'Standing desk', 'furniture', 420.0),
 ('CHAIR-02', 'Ergonomic chair', 'furniture', 310.0),
 ('SCR-27', '27-inch monitor', 'electronics', 260.0),
 ('KB-10', 'Mechanical keyboard', 'electronics', 95.0),
 ('LAMP-03', 'Desk lamp', 'furniture', 45.0),
 ('HUB-07', 'USB-C dock', 'electronics', 130.0);
INSERT INTO orders VALUES
 (101, 1, '2025-01-03', 'delivered'),
 (102, 1, '2025-02-11', 'delivered'),
 (103, 2, '2025-02-12', 'delivered'),
 (104, 3, '2025-03-01', 'shipped'),
 (105, 4, '2025-03-15', 'cancelled'),
 (106, 5, '2025-03-20', 'delivered'),
 (107, 3, '2025-04-02', 'pending'),
 (108, 6, '2025-04-28', 'shipped');
INSERT INTO order_items VALUES
 (101, 'DESK-01', 1), (101, 'LAMP-03', 2),
 (102, 'KB-10', 1),
 (103, 'SCR-27', 2), (103, 'HUB-07', 1),
 (104, 'DESK-01', 2), (104, 'CHAIR-02', 2),
 (105, 'SCR-27', 1),
 (106, 'KB-10', 3), (106, 'LAMP-03', 1),
 (107, 'HUB-07', 1),
 (108, 'CHAIR-02', 1), (108, 'SCR-27', 1);
