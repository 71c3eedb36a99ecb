

pub use crate::types::_vpc_ipv6_cidr_block_association::VpcIpv6CidrBlockAssociationBuilder;

pub use crate::types::_vpc_cidr_block_association::VpcCidrBlockAssociationBuilder;

pub use crate::types::_vpc::VpcBuilder;

pub use crate::types::_vpc_encryption_control_configuration::VpcEncryptionControlConfigurationBuilder;

pub use crate::types::_vpc_encryption_control::VpcEncryptionControlBuilder;

pub use crate::types::_attribute_boolean_value::AttributeBooleanValueBuilder;

pub use crate::types::_tag_specification::TagSpecificationBuilder;

pub use crate::types::_vpc_cidr_block_state::VpcCidrBlockStateBuilder;

pub use crate::types::_tag::TagBuilder;

pub use crate::types::_block_public_access_states::BlockPublicAccessStatesBuilder;

pub use crate::types::_vpc_encryption_control_exclusions::VpcEncryptionControlExclusionsBuilder;

pub use crate::types::_filter::FilterBuilder;

pub use crate::types::_tag_description::TagDescriptionBuilder;

pub use crate::types::_vpc_encryption_control_exclusion::VpcEncryptionControlExclusionBuilder;
