# The Rails recipe (docs/clients.md, "Rails"), as an app keeps it in
# config/initializers/snowflake.rb: Active Record 6.1 on PostgreSQL reads and
# writes the snowflake type as an Integer, migrations take it as a key type,
# and schema.rb dumps it (and the DEFAULT) instead of leaving the table out.
require "active_record"
require "active_record/connection_adapters/postgresql_adapter"

# Not a subclass of Active Record's Integer: results of those are left as the pg gem decoded them,
# which for this type is a String.
class SnowflakeType < ActiveModel::Type::Value
  def type
    :snowflake
  end

  private

  def cast_value(value)
    Integer(value.to_s, 10)
  end
end

module SnowflakeTypeMap
  private

  def initialize_type_map(m = type_map)
    m.register_type "snowflake", SnowflakeType.new
    super
  end
end

ActiveRecord::ConnectionAdapters::PostgreSQLAdapter.prepend(SnowflakeTypeMap)
ActiveRecord::ConnectionAdapters::PostgreSQLAdapter::NATIVE_DATABASE_TYPES[:snowflake] = { name: "snowflake" }
