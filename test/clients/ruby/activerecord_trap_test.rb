# Active Record 6.1 WITHOUT the recipe of snowflake_type.rb (run in a process
# of its own, since the recipe changes the adapter for good): a bigint key
# made by the migration works, but a snowflake-typed key comes back as a
# String, and schema.rb leaves its table out. to_json writes a bigint key as
# a bare number, which a double (JavaScript's number) changes.
require_relative "helper"

fresh_database("clients_rails_trap")
CreateShop.migrate(:up)

class Order < ActiveRecord::Base; end
class Post < ActiveRecord::Base; end

class ActiveRecordTrapTest < Minitest::Test
  def test_bigint_key_needs_nothing
    ids = [Order.create!(item: "one").id] + Order.insert_all((1..300).map { |n| { item: "b#{n}" } }, returning: %w[id]).cast_values
    assert(ids.all? { |i| i.is_a?(Integer) })
    assert_equal "ok", check_ids("orders", ids)
    # to_json writes the ID as a bare number, which a double (JavaScript's number) would change.
    order = Order.find(ids.find { |i| i.to_f.to_i != i })
    assert_match(/"id":#{order.id}[,}]/, order.to_json)
  end

  def test_snowflake_key_is_a_string
    assert_kind_of String, Post.create!(title: "raw").id
  end

  def test_schema_rb_leaves_the_table_out
    schema = StringIO.new
    ActiveRecord::SchemaDumper.dump(ActiveRecord::Base.connection, schema)
    assert_match(/Could not dump table "posts"/, schema.string)
  end
end
