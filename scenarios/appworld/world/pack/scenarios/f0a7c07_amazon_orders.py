"""Scenario f0a7c07 (dev): Maya's Amazon orders, wish list and cart.

Seeds (every variant's own world, via `seed_task`): twelve past orders of Maya (Feb-May 2023; the
seven March orders sit on pages 1-2 of `show_orders`, which lists newest first, with only one on
page 0), a wish list of seven new products (four under $30, one at exactly $30, one with quantity
2), and one item already in the cart.
Variants: total spent in March (question, paginated), move the cheap wish-list items to the cart,
re-add the items of the latest order shipped to the Work address.
"""

from __future__ import annotations

from pack.snippets import NULL_ANSWER_CHECK, check, checks, login_preamble, paginate, question_checks, solution
from pack.types import ScenarioDef, SeedContext, TaskDef

# Base-world products used by the orders, with the prices world.py gives them (checked when seeding).
BASE_PRICES = {
    "Stainless Steel Water Bottle": 24.99, "Wireless Earbuds": 59.0, "Yoga Mat": 31.5, "Cast Iron Skillet": 38.0,
    "LED Desk Lamp": 27.99, "Trail Running Shoes": 89.0, "Noise Cancelling Headphones": 199.0,
    "French Press": 22.0, "Throw Blanket": 34.5, "Backpack 25L": 64.0, "Phone Stand": 12.99, "Ceramic Planter": 18.0,
}
# (created_at, address name, [(product, quantity, gift-wrapped quantity)])
ORDERS = (
    ("2023-02-20T10:00:00", "Home", [("French Press", 1, 0)]),
    ("2023-03-02T14:00:00", "Home", [("Yoga Mat", 1, 0), ("Phone Stand", 2, 0)]),
    ("2023-03-06T09:30:00", "Work", [("LED Desk Lamp", 1, 0)]),
    ("2023-03-11T19:15:00", "Home", [("Cast Iron Skillet", 1, 0)]),
    ("2023-03-15T20:00:00", "Home", [("Throw Blanket", 2, 1)]),
    ("2023-03-21T12:45:00", "Work", [("Wireless Earbuds", 1, 0), ("Phone Stand", 1, 0)]),
    ("2023-03-26T16:10:00", "Home", [("Ceramic Planter", 3, 0)]),
    ("2023-03-30T08:20:00", "Home", [("Stainless Steel Water Bottle", 2, 0)]),
    ("2023-04-04T11:00:00", "Work", [("Backpack 25L", 1, 0)]),
    ("2023-04-17T18:30:00", "Home", [("Trail Running Shoes", 1, 0)]),
    ("2023-04-29T13:05:00", "Work", [("French Press", 1, 0), ("Stainless Steel Water Bottle", 1, 0),
                                     ("Ceramic Planter", 2, 0)]),
    ("2023-05-08T21:40:00", "Home", [("Noise Cancelling Headphones", 1, 0)]),
)
DELIVERY_FEE, TAX_RATE, GIFT_WRAP_FEE = 5.0, 0.10, 5.0  # AppWorld amazon's constants


def _charges(items: list[tuple[str, int, int]]) -> tuple[float, float, float]:
    """(tax, gift wrap fee, paid amount) of an order, as AppWorld's `place_order` and `Order.paid_amount` do."""
    subtotal = round(sum(BASE_PRICES[name] * quantity for name, quantity, _ in items), 2)
    tax = round(subtotal * TAX_RATE, 2)
    gift = round(sum(wrapped for _, _, wrapped in items) * GIFT_WRAP_FEE, 2)
    return tax, gift, round(subtotal + DELIVERY_FEE + tax + gift, 2)


MARCH_TOTAL = round(sum(_charges(items)[2] for when, _, items in ORDERS if when.startswith("2023-03")), 2)
LATEST_WORK_ITEMS = {name: quantity for name, quantity, _ in
                     [order for order in ORDERS if order[1] == "Work"][-1][2]}

# New products (own seller), all on Maya's wish list: (name, type, price, wish-list quantity).
WISH_LIST = (
    ("Bamboo Cutting Board", "kitchen", 19.5, 1), ("Linen Napkins Set of 4", "home", 16.0, 2),
    ("Enamel Dutch Oven", "kitchen", 79.0, 1), ("Beeswax Candle Trio", "home", 29.99, 1),
    ("Wool Area Rug", "home", 149.0, 1), ("Pour-Over Kettle", "kitchen", 30.0, 1),
    ("Walnut Wall Clock", "home", 27.5, 1),
)
CHEAP_LIMIT = 30.0
CHEAP_ITEMS = {name: quantity for name, _, price, quantity in WISH_LIST if price < CHEAP_LIMIT}
CART_ITEM = ("LED Desk Lamp", 1)


def seed_shop(ctx: SeedContext) -> None:
    amazon = ctx.models.amazon
    maya = ctx.user("amazon", ctx.supervisor.key)
    products = {}
    for name, price in BASE_PRICES.items():
        product = amazon.Product.find_one(name=name)
        if product is None or product.price != price:
            raise ValueError(f"base product {name!r} missing or not priced {price} (world.py changed?)")
        products[name] = product
    addresses = {address.name: address for address in amazon.Address.find_all(user_id=maya.id)}
    card = amazon.PaymentCard.find_all(user_id=maya.id)[0]
    for when, address_name, items in ORDERS:
        tax, gift, _ = _charges(items)
        address = addresses[address_name]
        order = amazon.Order.create_save(
            user_id=maya.id, address_id=address.id, payment_card_id=card.id, tax=tax, delivery_fee=DELIVERY_FEE,
            gift_wrap_fee=gift, discount=0.0, created_at=ctx.at(when), address_text=address.text,
            payment_card_digits=str(card.card_number)[-4:],
        )
        for name, quantity, wrapped in items:
            product = products[name]
            amazon.OrderItem.create_save(
                order_id=order.id, product_id=product.id, ordered_quantity=quantity, returned_quantity=0,
                gift_wrap_quantity=wrapped, price=product.price,
                expected_delivery_at=ctx.at(when).add(days=product.delivery_days),
                delivered_at=ctx.at(when).add(days=product.delivery_days),
            )
    seller = amazon.Seller.create_save(name="Juniper & Pine Home")
    for name, product_type, price, quantity in WISH_LIST:
        product = amazon.Product.create_save(
            name=name, product_type=product_type, description=f"{name}: handmade, sustainably sourced.",
            seller_id=seller.id, price=price, delivery_days=4, weight=1.2, length=14.0, width=10.0, height=4.0,
            inventory_quantity=40,
        )
        amazon.WishListEntry.create_save(user_id=maya.id, product_id=product.id, quantity=quantity)
    amazon.CartEntry.create_save(user_id=maya.id, product_id=products[CART_ITEM[0]].id, quantity=CART_ITEM[1])


LOGIN = login_preamble("amazon")
ALL_ORDERS = paginate("orders", "amazon.show_orders")


MARCH_SPENDING = TaskDef(
    variant=1,
    difficulty=1,
    instruction="How much did I spend in total on my Amazon orders placed in March 2023?",
    paraphrases={
        "mild": ("What did I spend in total on the Amazon orders I placed in March 2023?",),
        "medium": ("For my Amazon orders placed in March 2023, how much did I spend in total?",),
        "strong": (
            "It's Maya, I'm sorting my budget. Add up what I paid for everything I ordered on Amazon during March 2023 "
            "and give me the grand total.",
        ),
        "naturalistic": ("how much did i spend altogther on Amazon orders i placed in March 2023?",),
    },
    answer=MARCH_TOTAL,
    required_apps=("amazon",),
    seed_task=seed_shop,
    solution=solution(LOGIN, ALL_ORDERS, '''
    total = sum(order["paid_amount"] for order in orders if order["created_at"].startswith("2023-03"))
    apis.supervisor.complete_task(answer=round(total, 2))
'''),
    **question_checks("the total paid for the user's Amazon orders placed in March 2023"),
)

CHEAP_TO_CART = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        "Move every item on my Amazon wish list that costs less than $30 into my cart, with its full wish-list "
        "quantity. Leave the other wish-list items where they are and don't place an order."
    ),
    paraphrases={
        "mild": (
            "Move each item on my Amazon wish list that costs under $30 into my cart, with its full wish-list "
            "quantity. Leave the other wish-list items where they are and don't place an order.",
        ),
        "medium": (
            "Into my cart should go every item on my Amazon wish list that costs less than $30, each with its full "
            "wish-list quantity. Don't place an order, and leave the other wish-list items where they are.",
        ),
        "strong": (
            "Maya here, treating myself a little. Anything I've saved on Amazon for later that's priced below $30 can "
            "go to the basket, in whatever quantity I'd saved it; the pricier things stay saved, and nobody checks out "
            "yet.",
        ),
        "naturalistic": (
            "move everything on my Amazon wishlist that's under $30 into the cart (full qty from the wishlist). leave "
            "the rest on the wishlist & dont order anything",
        ),
    },
    required_apps=("amazon",),
    seed_task=seed_shop,
    private_data={"moved": CHEAP_ITEMS, "cart_item": CART_ITEM[0], "cart_quantity": CART_ITEM[1]},
    solution=solution(LOGIN, f'''
    for item in apis.amazon.show_wish_list(access_token=token):
        if item["price"] < {CHEAP_LIMIT}:
            apis.amazon.move_product_from_wish_list_to_cart(
                product_id=item["product_id"], quantity=item["quantity"], access_token=token
            )
    apis.supervisor.complete_task()
'''),
    **checks('''
    def product_name(entry):
        return models.end.amazon.Product.find_one(id=entry.product_id).name

    maya = models.end.amazon.User.find_from(main_user)
''', NULL_ANSWER_CHECK, check("no_op_fail", """
        assert the user's cart now holds exactly the cheap wish-list items (private_data.moved) with their full
        quantities, plus the item that was already in the cart, unchanged.
    """, '''
        cart = {product_name(entry): entry.quantity for entry in models.end.amazon.CartEntry.find_all(user_id=maya.id)}
        expected = dict(private_data.moved)
        expected[private_data.cart_item] = private_data.cart_quantity
        test.case(cart, "==", expected)
    '''), check("no_op_fail", """
        assert none of the moved items is left on the wish list.
    """, '''
        wish_list = {product_name(entry) for entry in models.end.amazon.WishListEntry.find_all(user_id=maya.id)}
        test.case(len(wish_list), ">", 0)
        test.case(wish_list & set(private_data.moved), "is_falsy")
    '''), check("no_op_pass", """
        assert the wish-list items costing $30 or more are still on the wish list, unchanged.
    """, '''
        start = {e.id: e.quantity for e in models.start.amazon.WishListEntry.find_all(user_id=maya.id)
                 if models.start.amazon.Product.find_one(id=e.product_id).price >= 30}
        end = {e.id: e.quantity for e in models.end.amazon.WishListEntry.find_all(user_id=maya.id) if e.id in start}
        test.case(len(start), ">", 0)
        test.case(end, "==", start)
    '''), check("no_op_pass", """
        assert no order was placed and nothing outside the cart and wish list changed.
    """, '''
        test.case(models.changed_model_names() - {"amazon.CartEntry", "amazon.WishListEntry"}, "is_falsy")
    ''')),
)

REORDER_WORK = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        "I want to buy again everything from my most recent Amazon order that was shipped to my Work address. "
        "Add each of its products to my cart in the same quantity as in that order, but don't place the order yet."
    ),
    paraphrases={
        "mild": (
            "I'd like to buy again everything from my latest Amazon order that was shipped to my Work address. Add "
            "each of its products to my cart in the same quantity as in that order, but don't place the order yet.",
        ),
        "medium": (
            "Take my most recent Amazon order shipped to my Work address and add each of its products to my cart, in "
            "the same quantity as in that order; I want to buy it all again, but don't place the order yet.",
        ),
        "strong": (
            "It's Maya, restocking the office. Whatever I last had Amazon deliver to the Work address, put those same "
            "products back in my basket with matching counts; I'll check out myself later.",
        ),
        "naturalistic": (
            "wanna reorder my last Amazon order that went to my Work address. add all its products to the cart, same "
            "qty as that order, but dont place the order yet",
        ),
    },
    required_apps=("amazon",),
    seed_task=seed_shop,
    private_data={"added": LATEST_WORK_ITEMS, "cart_item": CART_ITEM[0], "cart_quantity": CART_ITEM[1]},
    solution=solution(LOGIN, ALL_ORDERS, '''
    work = [a for a in apis.amazon.show_addresses(access_token=token) if a["name"] == "Work"][0]
    work_orders = [order for order in orders if order["address_id"] == work["address_id"]]
    latest = max(work_orders, key=lambda order: order["created_at"])
    for item in latest["order_items"]:
        apis.amazon.add_product_to_cart(
            product_id=item["product_id"], quantity=item["ordered_quantity"], access_token=token
        )
    apis.supervisor.complete_task()
'''),
    **checks('''
    maya = models.end.amazon.User.find_from(main_user)
''', NULL_ANSWER_CHECK, check("no_op_fail", """
        assert the user's cart now holds exactly the products of the latest Work-address order
        (private_data.added) in their ordered quantities, plus the item that was already in the cart, unchanged.
    """, '''
        cart = {models.end.amazon.Product.find_one(id=entry.product_id).name: entry.quantity
                for entry in models.end.amazon.CartEntry.find_all(user_id=maya.id)}
        expected = dict(private_data.added)
        expected[private_data.cart_item] = private_data.cart_quantity
        test.case(cart, "==", expected)
    '''), check("no_op_pass", """
        assert no order was placed or changed, the wish list is unchanged, and nothing outside the cart changed.
    """, '''
        test.case(models.changed_model_names() - {"amazon.CartEntry"}, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0a7c07",
    title="Amazon orders, wish list and cart",
    split="dev",
    apps=("amazon",),
    tasks=(MARCH_SPENDING, CHEAP_TO_CART, REORDER_WORK),
)
