#!/bin/sh
# As Apache Kafka's kafka-topics.sh: runs org.apache.kafka.tools.TopicCommand.
# shellcheck disable=SC2086
exec java ${KAFKA_HEAP_OPTS:--Xmx256m} -XX:-UsePerfData -Djava.awt.headless=true \
	-Dlog4j.configuration=file:/opt/kafka/config/tools-log4j.properties \
	-cp '/opt/kafka/libs/*' org.apache.kafka.tools.TopicCommand "$@"
