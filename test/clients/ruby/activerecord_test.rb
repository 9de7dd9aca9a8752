# Active Record 6.1 with snowflake keys (docs/clients.md, "Rails"), the recipe
# of snowflake_type.rb loaded: the shop's migration, rows made by create,
# save and insert_all, every returned ID equal to the table's id::text (with
# IDs a double cannot hold among them), rows read back by ID, to_json with
# the IDs as strings, and schema.rb keeping both keys' types and DEFAULTs
# through a dump and a load into another database.
require_relative "helper"
require_relative "snowflake_type"

fresh_database("clients_rails")
CreateShop.migrate(:up)

# IDs in JSON as strings: JavaScript's numbers cannot hold them.
class ApplicationRecord < ActiveRecord::Base
  self.abstract_class = true

  def as_json(options = nil)
    super.merge("id" => id.to_s)
  end
end

class Order < ApplicationRecord; end
class Post < ApplicationRecord; end

class ActiveRecordTest < Minitest::Test
  # Makes rows of MODEL (column FIELD) by create, save and insert_all; returns them, checked.
  def made(model, field)
    one = model.create!(field => "one")
    two = model.new(field => "two")
    two.save!
    # insert_all hands back raw values: cast_values types them as the model's columns are.
    bulk = model.insert_all((1..300).map { |n| { field => "b#{n}" } }, returning: %w[id]).cast_values
    ids = [one.id, two.id] + bulk
    assert(ids.all? { |i| i.is_a?(Integer) && (i >> 12) & 1023 == NODE }, ids.first(3).inspect)
    assert_equal "ok", check_ids(model.table_name, ids)
    ids.each { |i| assert_equal i, model.find(i).id }
    ids
  end

  def test_bigint_key
    made(Order, :item)
  end

  def test_snowflake_key
    made(Post, :title)
  end

  def test_to_json_writes_the_id_as_a_string
    post = Post.create!(title: "json")
    assert_equal post.id.to_s, JSON.parse(post.to_json)["id"]
    assert_equal post.id.to_s, JSON.parse([post].to_json)[0]["id"]
  ensure
    # test_snowflake_key checks that posts holds exactly the rows it made, in whatever order minitest runs.
    post&.destroy
  end

  def test_schema_rb_keeps_the_types_and_defaults
    schema = StringIO.new
    ActiveRecord::SchemaDumper.dump(ActiveRecord::Base.connection, schema)
    dump = schema.string
    refute_match(/Could not dump/, dump)
    assert_match(/create_table "orders", id: :bigint, default: -> \{ "snowflake_nextval\(\)" \}/, dump)
    assert_match(/create_table "posts", id: :snowflake, default: -> \{ "snowflake_nextval\(\)" \}/, dump)
    # Loaded into another database, schema.rb makes the same keys.
    fresh_database("clients_rails_loaded")
    eval(dump) # rubocop:disable Security/Eval -- schema.rb is Ruby, loaded as rails db:schema:load does
    keys = ActiveRecord::Base.connection.select_rows(
      "SELECT table_name, udt_name, column_default FROM information_schema.columns " \
      "WHERE column_name = 'id' AND table_name IN ('orders', 'posts') ORDER BY 1"
    )
    assert_equal [%w[orders int8 snowflake_nextval()], %w[posts snowflake snowflake_nextval()]], keys
    assert Post.create!(title: "loaded").id.is_a?(Integer)
  ensure
    fresh_database("clients_rails")
    CreateShop.migrate(:up)
  end
end
